// The router: the only writer of replies (ARCHITECTURE "one way through").
// Frame → JSON → envelope → batch → dispatch → reply with the request's exact id.
// Handlers return values or throw ProtocolError; anything else becomes -32603 without internals.
import { ErrorCode, ProtocolError } from '../protocol/errors.ts';
import { classify, failure, invalidRequest, success, type JsonRpcId, type JsonRpcResponse } from '../protocol/jsonrpc.ts';
import { DEFAULT_MAX_DEPTH, exceedsDepth } from '../protocol/depth.ts';
import type { InboundFrame, Logger } from './ports.ts';
import type { InflightTracker } from './inflight.ts';

export interface CallContext {
  /** The request's id; undefined for notifications. */
  id?: string | number | null;
  /** In-flight token of this request, so claw.shutdown drains only what arrived before it. */
  token?: number;
  /** Which transport the call arrived on. */
  transport: string;
}

export type Dispatch = (method: string, params: unknown, ctx: CallContext) => Promise<unknown>;

export interface RouterOptions {
  dispatch: Dispatch;
  inflight: InflightTracker;
  log: Logger;
  maxDepth?: number;
  /** Called for JSON-RPC responses arriving from peers (agent-initiated requests). */
  onResponse?: (msg: JsonRpcResponse) => void;
}

export class Router {
  private readonly maxDepth: number;
  constructor(private readonly opts: RouterOptions) {
    this.maxDepth = opts.maxDepth ?? DEFAULT_MAX_DEPTH;
  }

  /** Handle one inbound frame from `transport`. Never throws. */
  handle(frame: InboundFrame, transport: string): void {
    void this.process(frame, transport).catch((err) => {
      this.opts.log.error('router failure', { error: String(err) });
    });
  }

  private async process(frame: InboundFrame, transport: string): Promise<void> {
    const p = frame.payload;
    if ('error' in p) {
      const err =
        p.error === 'oversize'
          ? new ProtocolError(ErrorCode.InvalidRequest, `Invalid request: frame of ${p.bytes} bytes exceeds the ${p.limit}-byte limit`, {
              limit: p.limit,
            })
          : new ProtocolError(ErrorCode.ParseError, 'Parse error: frame is not valid UTF-8');
      frame.reply(failure(null, err));
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(p.text);
    } catch (e) {
      frame.reply(failure(null, new ProtocolError(ErrorCode.ParseError, `Parse error: ${(e as Error).message}`)));
      return;
    }
    if (exceedsDepth(value, this.maxDepth)) {
      const id = typeof value === 'object' && value !== null && !Array.isArray(value) ? idOf((value as any).id) : null;
      frame.reply(failure(id, invalidRequest(`message nests deeper than ${this.maxDepth} levels`)));
      return;
    }
    if (Array.isArray(value)) {
      // JSON-RPC 2.0 §6: an empty batch is one invalid request; otherwise answer each request,
      // never the notifications, and send nothing at all when only notifications came.
      if (value.length === 0) {
        frame.reply(failure(null, invalidRequest('empty batch')));
        return;
      }
      const replies = await Promise.all(value.map((v) => this.one(v, transport)));
      const out = replies.filter((r): r is JsonRpcResponse => r !== undefined);
      if (out.length > 0) frame.reply(out);
      return;
    }
    const reply = await this.one(value, transport);
    if (reply) frame.reply(reply);
  }

  /** Process one message; returns its reply, or undefined for notifications and responses. */
  private async one(value: unknown, transport: string): Promise<JsonRpcResponse | undefined> {
    const c = classify(value);
    switch (c.type) {
      case 'invalid':
        return failure(c.id, invalidRequest(c.reason));
      case 'response':
        this.opts.onResponse?.(c.msg);
        return undefined;
      case 'notification': {
        const work = this.opts.dispatch(c.msg.method, c.msg.params, { transport });
        this.opts.inflight.track(work);
        try {
          await work;
        } catch (err) {
          // Notifications are never answered (JSON-RPC 2.0 §4.1), but a failure is worth a log line.
          this.opts.log.debug('notification failed', { method: c.msg.method, error: describe(err) });
        }
        return undefined;
      }
      case 'request': {
        const { id, method, params } = c.msg;
        const ctx: CallContext = { id, transport };
        let resolveStart!: () => void;
        const started = new Promise<void>((r) => (resolveStart = r));
        const work = started.then(() => this.opts.dispatch(method, params, ctx));
        ctx.token = this.opts.inflight.track(work);
        resolveStart();
        try {
          return success(id, await work);
        } catch (err) {
          return failure(id, this.toProtocolError(err, method));
        }
      }
    }
  }

  private toProtocolError(err: unknown, method: string): ProtocolError {
    if (err instanceof ProtocolError) return err;
    // Unexpected failure: log it (stderr), answer without internals.
    this.opts.log.error('handler failed', { method, error: describe(err) });
    return new ProtocolError(ErrorCode.InternalError, 'Internal error');
  }
}

function idOf(x: unknown): JsonRpcId {
  return typeof x === 'string' || (typeof x === 'number' && Number.isFinite(x)) ? x : null;
}

function describe(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}
