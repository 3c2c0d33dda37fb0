// One channel's message path (docs/channels.md "Messages"): a frame from the channel's transport →
// `channel.message` request → access gate → trigger scheduler → agent.turn → the reply to that sender.
// Transport-neutral: the fs inbox (queue-fs.ts) and the MQTT topic (queue-mqtt.ts) hand frames here.
import type { InboundFrame, Logger, TelemetrySink } from '../kernel/ports.ts';
import { classify, failure, success, type JsonRpcId, type JsonRpcMessage } from '../protocol/jsonrpc.ts';
import { ErrorCode, ProtocolError } from '../protocol/errors.ts';
import type { ChannelGate } from './access.ts';
import type { TriggerScheduler } from './trigger.ts';
import type { GetAgent } from './types.ts';
import { timerDelay } from '../protocol/delay.ts';

/** What a channel inbox accepts: messages, and (admins only) decisions on pending tool approvals. */
export const CHANNEL_METHOD = 'channel.message';
export const APPROVE_METHOD = 'channel.approve';
export const DENY_METHOD = 'channel.deny';

/** Decide a pending tool approval (claw.tool.approve / claw.tool.deny through the kernel); true when one waited. */
export type DecideApproval = (requestId: string, decision: 'approved' | 'denied', reason?: string) => Promise<boolean>;

export interface ChannelRunnerDeps {
  channel: string;
  gate: ChannelGate;
  scheduler: TriggerScheduler;
  getAgent: GetAgent;
  log: Logger;
  /** Without it, channel.approve / channel.deny are not offered (-32601). */
  decide?: DecideApproval;
  /** false once the agent is STOPPING (spec §8): no new turn starts, even before this channel's stop. */
  accepting?: () => boolean;
  /** §5.11 `errors`: every JSON-RPC error response, here `channel.error` with code and reason (no user id, no text). */
  telemetry?: TelemetrySink;
}

export interface ChannelRunner {
  handle(frame: InboundFrame): void;
  /** Refuse new messages, cancel waiting ones, let running turns finish for `graceMs`, then abort them. */
  stop(graceMs: number): Promise<void>;
}

export function createChannelRunner(d: ChannelRunnerDeps): ChannelRunner {
  let stopping = false;
  const controllers = new Set<AbortController>();
  const channel = d.channel;

  const reportError = (code: number, data: unknown) => {
    const reason = typeof data === 'object' && data !== null ? (data as { reason?: unknown }).reason : undefined;
    d.telemetry?.emit('errors', 'channel.error', { channel, code, reason: typeof reason === 'string' ? reason : undefined });
  };
  const refuse = (frame: InboundFrame, id: JsonRpcId, code: number, message: string, data?: unknown) => {
    reportError(code, data);
    frame.reply(failure(id, new ProtocolError(code, message, data)));
  };

  /** spec §5.3 roles: only an admin may "approve actions" through the channel. */
  const decideApproval = (
    method: string,
    p: Record<string, unknown> | undefined,
    fail: (code: number, message: string, data?: unknown) => unknown,
    answer: (m: JsonRpcMessage) => unknown,
    id: JsonRpcId,
  ) => {
    const bad =
      p === undefined || Array.isArray(p)
        ? 'params must be an object {"from", "request_id", "reason"?}'
        : Object.keys(p).find((k) => k !== 'from' && k !== 'request_id' && k !== 'reason')
          ? 'params are from, request_id and reason'
          : typeof p.request_id !== 'string' || p.request_id === ''
            ? 'request_id must be a non-empty string'
            : p.reason !== undefined && typeof p.reason !== 'string'
              ? 'reason must be a string'
              : undefined;
    if (bad) return fail(ErrorCode.InvalidParams, `Invalid params: ${bad}`);
    const v = d.gate.check(p!.from, p!.request_id as string);
    if (!v.allow) return fail(v.code, v.message, v.data);
    if (!v.mayApprove) return fail(ErrorCode.ChannelAuthFailed, 'Channel auth failed: only an admin of this channel may decide approvals', { channel, reason: 'not_admin' });
    const decision = method === APPROVE_METHOD ? 'approved' : 'denied';
    d.log.info('channel approval decision', { channel, decision, request_id: p!.request_id });
    d.decide!(p!.request_id as string, decision, p!.reason as string | undefined).then(
      (acknowledged) => answer(success(id, { acknowledged })),
      (e) => (e instanceof ProtocolError ? fail(e.code, e.message, e.data) : fail(ErrorCode.InternalError, 'Internal error: the decision failed', { channel })),
    );
  };

  return {
    handle(frame) {
      if ('error' in frame.payload) {
        const p = frame.payload;
        return refuse(frame, null, ErrorCode.InvalidRequest, p.error === 'oversize' ? `Invalid request: message of ${p.bytes} bytes exceeds ${p.limit}` : 'Invalid request: not UTF-8');
      }
      let value: unknown;
      try {
        value = JSON.parse(frame.payload.text);
      } catch {
        return refuse(frame, null, ErrorCode.ParseError, 'Parse error: not JSON');
      }
      if (Array.isArray(value)) return refuse(frame, null, ErrorCode.InvalidRequest, 'Invalid request: a channel takes one message per request, not a batch');
      const c = classify(value);
      if (c.type === 'invalid') return refuse(frame, c.id, ErrorCode.InvalidRequest, `Invalid request: ${c.reason}`);
      if (c.type === 'response') return; // nobody here asked anything
      const isRequest = c.type === 'request';
      const id: JsonRpcId = isRequest ? c.msg.id : null;
      // A notification is run but never answered (JSON-RPC 2.0 §4.1), refusals included.
      const answer = (m: JsonRpcMessage) => isRequest && frame.reply(m);
      const fail = (code: number, message: string, data?: unknown) => {
        if (isRequest) reportError(code, data);
        answer(failure(id, new ProtocolError(code, message, data)));
      };

      const method = c.msg.method;
      if ((method === APPROVE_METHOD || method === DENY_METHOD) && d.decide) return decideApproval(method, c.msg.params as Record<string, unknown> | undefined, fail, answer, id);
      if (method !== CHANNEL_METHOD) return fail(ErrorCode.MethodNotFound, `Method not found: ${method} (a channel inbox takes ${CHANNEL_METHOD})`);
      const params = c.msg.params as Record<string, unknown> | undefined;
      const bad = paramsProblem(params);
      if (bad) return fail(ErrorCode.InvalidParams, `Invalid params: ${bad}`);
      const from = params!.from as string;
      const text = params!.text as string;
      if (stopping || d.accepting?.() === false) return fail(ErrorCode.InternalError, 'Internal error: the channel is stopping; send again later', { channel, reason: 'stopping' });

      const verdict = d.gate.check(from, text);
      if (!verdict.allow) {
        d.log.info('channel message refused', { channel, reason: verdict.reason });
        return fail(verdict.code, verdict.message, verdict.data);
      }
      const run = async () => {
        const agent = d.getAgent();
        if (!agent) return fail(ErrorCode.InternalError, 'Internal error: the agent is not running', { channel, reason: 'agent_unavailable' });
        if (!verdict.tools && agent.channelTurns !== true) {
          // Never run a viewer's turn with tools on: refuse rather than over-grant.
          return fail(ErrorCode.ChannelAuthFailed, 'Channel auth failed: read-only (viewer) turns are not available on this agent', { channel, reason: 'viewer_unsupported' });
        }
        const ac = new AbortController();
        controllers.add(ac);
        const started = performance.now();
        try {
          const r = await agent.turn(text, ac.signal, { channel, user: verdict.user, conversation: `${channel}:${verdict.user}`, tools: verdict.tools });
          d.log.debug('channel turn done', { channel, outcome: r.outcome, tool_calls: r.toolCalls.length, ms: Math.round(performance.now() - started) });
          answer(success(id, { reply: r.reply, outcome: r.outcome, tool_calls: r.toolCalls.length }));
        } catch (e) {
          if (e instanceof ProtocolError) fail(e.code, e.message, e.data);
          else if (ac.signal.aborted) fail(ErrorCode.InternalError, 'Internal error: the turn was cancelled (the agent is stopping)', { channel, reason: 'cancelled' });
          else {
            d.log.error('channel turn failed', { channel, error: e instanceof Error ? e.message : String(e) });
            fail(ErrorCode.InternalError, 'Internal error: the turn failed', { channel });
          }
        } finally {
          controllers.delete(ac);
        }
      };
      const cancel = () => fail(ErrorCode.InternalError, 'Internal error: the channel stopped before this message ran; send again later', { channel, reason: 'stopping' });
      const s = d.scheduler.submit(run, cancel);
      if (s === 'skipped_busy' || s === 'skipped_queue_full') {
        const busy = s === 'skipped_busy';
        d.log.info('channel message skipped', { channel, reason: busy ? 'busy' : 'queue_full' });
        fail(
          ErrorCode.ChannelRateLimited,
          busy
            ? `Channel rate limited: the channel is busy (max_parallel ${d.scheduler.maxParallel}, overlap_policy skip); the message was not run`
            : `Channel rate limited: ${d.scheduler.maxQueue} messages are already waiting; the message was not run`,
          { channel, reason: busy ? 'busy' : 'queue_full' },
        );
      }
    },
    async stop(graceMs) {
      stopping = true;
      d.scheduler.cancelQueued();
      const idle = d.scheduler.idle();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timedOut = await Promise.race([idle.then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), timerDelay(graceMs))))]);
      clearTimeout(timer);
      if (timedOut) {
        for (const ac of controllers) ac.abort(new Error('channel stopping'));
        await Promise.race([idle, new Promise((r) => setTimeout(r, 1000))]);
      }
    },
  };
}

function paramsProblem(p: Record<string, unknown> | undefined): string | undefined {
  if (p === undefined || Array.isArray(p)) return 'params must be an object {"from": "...", "text": "..."}';
  for (const k of Object.keys(p)) if (k !== 'from' && k !== 'text') return `unknown field "${k}" (params are from and text)`;
  if (typeof p.from !== 'string') return 'from must be a string (the sender id)';
  if (typeof p.text !== 'string') return 'text must be a string';
  return undefined;
}
