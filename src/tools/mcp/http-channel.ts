// MCP Streamable HTTP transport (MCP spec 2025-11-25 "Transports", also 2025-06-18 / 2025-03-26):
// every JSON-RPC message we send is one POST to the server's MCP endpoint.
// - POST with `Accept: application/json, text/event-stream`. A request is answered with a JSON body,
//   or with an SSE stream carrying server requests/notifications and finally the response. A
//   notification or response we send is answered 202 Accepted.
// - `Mcp-Session-Id` from the initialize response is sent on every later request, and
//   `MCP-Protocol-Version: <negotiated>` once initialize settled on a version.
// - 404 to a request that carried a session id: the server forgot the session. That request was not
//   processed, so the core opens a new session (initialize again) and sends it once more; requests
//   still pending on the old session fail (they may have run). Servers built on the SDK's example
//   router answer 400 "No valid session ID" instead of 404: a 400 whose JSON-RPC error message names
//   the session is read the same way.
// - An SSE stream that ends before the response arrives is resumed with GET + Last-Event-ID when the
//   server gave event ids (at most MAX_RESUMES times, after the server's `retry` delay, capped);
//   otherwise the request fails ('crashed'). Once the response is in, we close the stream ourselves.
// - A timed-out or aborted request: the core sends notifications/cancelled (a POST of its own) and
//   abandon() aborts that request's exchange; the session goes on (MCP: a disconnect is not a cancel).
// - close(): DELETE with the session id (a 405 answer is fine), bounded by the grace time.
// - Our notifications and responses go out at most MAX_SENDS_IN_FLIGHT at a time; while more are queued,
//   the event stream that caused them is not read (back-pressure on a server flooding us with requests).
// - We open no standalone GET stream: we declare no client capabilities that need server-initiated
//   requests, and tool lists are re-read on each new session. Server requests arriving on a POST's
//   stream are answered by the core (ping → {}, the rest → -32601).
// - Every request goes through the injected `request` (the network guard: sandbox mode, allowlist,
//   SSRF with DNS pinning, redirects re-checked; our credential headers and the session id never
//   follow a redirect to another origin). Errors, logs and results never carry header values:
//   every message the server sends is cleaned of our header values (redact.ts) before the core
//   reads it, and so is any body quoted in an error.
import type { Logger } from '../../kernel/ports.ts';
import { FetchFailed, NetworkDenied, type GuardedRequestInit, type GuardedResponse } from '../../net/guarded-fetch.ts';
import type { McpChannel, McpChannelHooks, McpTransport } from './channel.ts';
import { McpError } from './errors.ts';
import { MAX_MESSAGE_DEPTH, parseInbound } from './inbound.ts';
import { redactText, redactValue, secretsOf } from './redact.ts';
import { SseParser } from '../../protocol/sse.ts';
import { timerDelay } from '../../protocol/delay.ts';

/** The guarded HTTP request (guardedRequest bound to the server's sandbox network rules). */
export type McpHttpRequest = (url: string, init: GuardedRequestInit) => Promise<GuardedResponse>;

export interface HttpTransportOptions {
  /** The MCP endpoint. */
  url: string;
  label: string;
  request: McpHttpRequest;
  /** Extra headers on every request (authentication), resolved at each session start. */
  headers?: () => Record<string, string> | Promise<Record<string, string>>;
  logger: Logger;
  maxFrameBytes: number;
  /** Bound on the exchange of a notification or a response we send (its body included), and on the DELETE (default 30 s). */
  sendTimeoutMs?: number;
}

const MAX_RESUMES = 3;
/**
 * Our notifications and responses (the core's answers to server requests) go out through at most this many
 * exchanges at once: each is a POST, and a server that sent 3,000 pings in one stream had 3,000 POSTs opened
 * at once (436 sockets open together while it took 50 ms over each).
 */
const MAX_SENDS_IN_FLIGHT = 4;
/** Queued sends past which the stream that causes them is no longer read until the queue drains. */
const OUTBOX_HOLD = 64;
const MAX_FAILURE_LOGS = 5;
const MAX_RETRY_DELAY_MS = 5000;
const MAX_ERROR_BODY = 64 * 1024;
/** setTimeout's largest delay: a request's own deadline is the caller's timeout (the core's). */
const NO_DEADLINE = 2_147_483_647;

const isObj = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
const clip = (s: string, n = 300) => (s.length > n ? `${s.slice(0, n)}…` : s);

export function httpTransport(o: HttpTransportOptions): McpTransport {
  return {
    async open(hooks) {
      let auth: Record<string, string>;
      try {
        auth = o.headers ? await o.headers() : {};
      } catch (e) {
        throw new McpError('config', `MCP server ${o.label}: cannot build its request headers: ${(e as Error)?.message ?? String(e)}`);
      }
      return new HttpChannel(o, hooks, auth);
    },
  };
}

class HttpChannel implements McpChannel {
  readonly stopOnCancel = false;
  private sessionId: string | undefined;
  private protocolVersion: string | undefined;
  private ended = false;
  private garbage = 0;
  private readonly live = new Set<AbortController>();
  private readonly byId = new Map<number, AbortController>();
  private readonly secrets: string[];
  /** Notifications and responses waiting for one of the MAX_SENDS_IN_FLIGHT exchanges (in order). */
  private readonly outbox: unknown[] = [];
  private sending = 0;
  private drainWaiters: (() => void)[] = [];
  private failures = 0;

  constructor(
    private readonly o: HttpTransportOptions,
    private readonly hooks: McpChannelHooks,
    private readonly auth: Record<string, string>,
  ) {
    // Every header value we add is treated as secret in messages (tokens, API keys).
    this.secrets = secretsOf(auth);
  }

  note(): string {
    return '';
  }

  negotiated(version: string): void {
    this.protocolVersion = version;
  }

  send(msg: unknown): void {
    if (this.ended) return;
    if (isObj(msg) && typeof msg.method === 'string' && typeof msg.id === 'number') return void this.post(msg);
    this.outbox.push(msg);
    this.pump();
  }

  /** Start queued notifications and responses while fewer than MAX_SENDS_IN_FLIGHT are under way. */
  private pump(): void {
    while (!this.ended && this.sending < MAX_SENDS_IN_FLIGHT && this.outbox.length > 0) {
      this.sending++;
      void this.post(this.outbox.shift()).finally(() => {
        this.sending--;
        this.pump();
      });
    }
    if (this.ended) this.outbox.length = 0;
    if (this.outbox.length < OUTBOX_HOLD) for (const wake of this.drainWaiters.splice(0)) wake();
  }

  /**
   * Resolves once the outbox is below OUTBOX_HOLD (or `signal` aborts): a stream reader waits here, so a
   * server that keeps sending requests is slowed by TCP back-pressure instead of growing our queue.
   */
  private drained(signal: AbortSignal): Promise<void> {
    if (this.outbox.length < OUTBOX_HOLD || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = () => {
        signal.removeEventListener('abort', wake);
        resolve();
      };
      this.drainWaiters.push(wake);
      signal.addEventListener('abort', wake, { once: true });
    });
  }

  abandon(id: number): void {
    this.byId.get(id)?.abort();
  }

  async kill(): Promise<void> {
    this.ended = true;
    for (const c of this.live) c.abort();
    this.pump();
  }

  async close(graceMs: number): Promise<void> {
    this.ended = true;
    for (const c of this.live) c.abort();
    this.pump();
    if (this.sessionId === undefined) return;
    try {
      const res = await this.o.request(this.o.url, { method: 'DELETE', headers: this.headers({}), timeoutMs: Math.max(1, graceMs), dropOnCrossOrigin: this.ownHeaderNames });
      res.body.destroy();
      this.o.logger.debug('mcp session deleted', { server: this.o.label, status: res.status });
    } catch (e) {
      this.o.logger.debug('mcp session DELETE failed', { server: this.o.label, error: this.redact((e as Error)?.message ?? String(e)) });
    }
  }

  /** Our credentials and the session never follow a redirect to another origin. */
  private get ownHeaderNames(): string[] {
    return [...Object.keys(this.auth), 'mcp-session-id'];
  }

  private headers(extra: Record<string, string>): Record<string, string> {
    const h: Record<string, string> = { ...this.auth, ...extra };
    if (this.sessionId !== undefined) h['mcp-session-id'] = this.sessionId;
    if (this.protocolVersion !== undefined) h['mcp-protocol-version'] = this.protocolVersion;
    return h;
  }

  private redact(s: string): string {
    return redactText(s, this.secrets);
  }

  private fail(id: number | undefined, err: McpError, what: string): void {
    if (id !== undefined) this.hooks.onRequestFailed(id, err);
    else if (++this.failures <= MAX_FAILURE_LOGS) this.o.logger.warn('mcp message delivery failed', { server: this.o.label, message: what, error: err.message });
    else if (this.failures === MAX_FAILURE_LOGS + 1) this.o.logger.warn('mcp message deliveries keep failing; no longer logging them', { server: this.o.label });
  }

  private async post(msg: unknown): Promise<void> {
    const isRequest = isObj(msg) && typeof msg.method === 'string' && typeof msg.id === 'number';
    const id = isRequest ? (msg.id as number) : undefined;
    const what = isObj(msg) && typeof msg.method === 'string' ? msg.method : 'a response';
    const isInit = isRequest && msg.method === 'initialize';
    const ctl = new AbortController();
    this.live.add(ctl);
    if (id !== undefined) this.byId.set(id, ctl);
    const sentSession = this.sessionId;
    // A notification or a response has no caller waiting with a timeout of its own: its whole exchange, an error
    // body that never ends included, is bounded here, or each one would hold a connection for good.
    const sendTimeoutMs = this.o.sendTimeoutMs ?? 30_000;
    let timedOut = false;
    const deadline = id === undefined ? setTimeout(() => ((timedOut = true), ctl.abort()), timerDelay(sendTimeoutMs)) : undefined;
    try {
      const res = await this.o.request(this.o.url, {
        method: 'POST',
        headers: this.headers({ 'content-type': 'application/json', accept: 'application/json, text/event-stream' }),
        body: JSON.stringify(msg),
        signal: ctl.signal,
        timeoutMs: id === undefined ? sendTimeoutMs : NO_DEADLINE,
        dropOnCrossOrigin: this.ownHeaderNames,
      });
      if (isInit && res.headers['mcp-session-id']) this.sessionId = res.headers['mcp-session-id'];
      await this.onResponse(res, id, what, sentSession, ctl.signal);
    } catch (e) {
      if (timedOut) return this.fail(id, new McpError('unreachable', `MCP server ${this.o.label} did not finish answering ${what} within ${sendTimeoutMs} ms`), what);
      if (ctl.signal.aborted) return; // abandoned (timeout, abort) or closed: the core already answered
      this.fail(id, this.toMcpError(e, what), what);
    } finally {
      clearTimeout(deadline);
      this.live.delete(ctl);
      if (id !== undefined && this.byId.get(id) === ctl) this.byId.delete(id);
    }
  }

  private async onResponse(res: GuardedResponse, id: number | undefined, what: string, sentSession: string | undefined, signal: AbortSignal): Promise<void> {
    const { status } = res;
    const label = this.o.label;
    if (status >= 200 && status < 300 && status !== 202) {
      // A notification or response we sent is answered 202 without a body (MCP "Sending Messages to the Server"):
      // a body is not read, so a stream that never ends holds no connection.
      if (id === undefined) return void res.body.destroy();
      const type = (res.headers['content-type'] ?? '').toLowerCase();
      if (type.startsWith('text/event-stream')) {
        await this.readStream(res, id, what, signal);
      } else if (type.startsWith('application/json')) {
        const text = await readText(res, this.o.maxFrameBytes);
        if (text === undefined) throw new McpError('protocol', `MCP server ${label} answered ${what} with a body over the ${this.o.maxFrameBytes}-byte limit`);
        this.deliver(text, what);
      } else {
        res.body.destroy();
        throw new McpError('protocol', `MCP server ${label} answered ${what} with content type "${clip(type, 80)}" (expected application/json or text/event-stream)`);
      }
      if (id !== undefined && this.hooks.isPending(id)) throw new McpError('protocol', `MCP server ${label} ended its answer to ${what} without a response`);
      return;
    }
    const body = (await readText(res, MAX_ERROR_BODY)) ?? '';
    if (status === 202) {
      if (id !== undefined) throw new McpError('protocol', `MCP server ${label} answered the request ${what} with 202 Accepted and no response`);
      return;
    }
    const rpcError = parseRpcError(body);
    if (sentSession !== undefined && (status === 404 || (status === 400 && rpcError !== undefined && /session/i.test(rpcError.message)))) {
      const err = new McpError('session-expired', `MCP server ${label} no longer knows our session (HTTP ${status} to ${what})`);
      if (id !== undefined) this.hooks.onRequestFailed(id, err);
      else this.hooks.onClosed((w) => new McpError('crashed', `MCP server ${label} ended the session while ${w ?? 'nothing'} was pending`));
      return;
    }
    if (status === 401 || status === 403) {
      throw new McpError('auth', `MCP server ${label} refused our credentials (HTTP ${status} to ${what}); check mcp.servers in claw.runtime.yaml`);
    }
    // A JSON-RPC error answering our request is that request's answer (the core reports it as such).
    if (rpcError !== undefined && id !== undefined && rpcError.id === id) {
      this.deliver(body, what);
      return;
    }
    const detail = body.trim() ? `: ${clip(this.redact(body.trim()))}` : '';
    if (status === 502 || status === 503 || status === 504) throw new McpError('unreachable', `MCP server ${label} is unavailable (HTTP ${status} to ${what})${detail}`);
    throw new McpError('protocol', `MCP server ${label} answered ${what} with HTTP ${status}${detail}`);
  }

  /** An SSE response: deliver each event's message; resume with Last-Event-ID if it ends too early. */
  private async readStream(first: GuardedResponse, id: number | undefined, what: string, signal: AbortSignal): Promise<void> {
    const parser = new SseParser(this.o.maxFrameBytes);
    let res = first;
    for (let resumes = 0; ; resumes++) {
      try {
        for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
          for (const ev of parser.push(chunk)) {
            // An event with an id and no data primes resumption (2025-11-25); other types are not MCP's.
            if (ev.event !== 'message' || ev.data === '') continue;
            this.deliver(ev.data, what);
          }
          // The response is in: the stream is done for us, whether or not the server closes it (it SHOULD,
          // MCP "Sending Messages to the Server"), or each such request would keep its connection for good.
          if (id === undefined || !this.hooks.isPending(id)) {
            res.body.destroy();
            return;
          }
          await this.drained(signal);
        }
      } catch (e) {
        if (signal.aborted) throw e;
        if (e instanceof McpError) {
          res.body.destroy();
          throw e;
        }
        if (/over \d+ bytes/.test(String((e as Error)?.message))) {
          res.body.destroy();
          throw new McpError('protocol', `MCP server ${this.o.label} sent ${(e as Error).message} while answering ${what}`);
        }
        // The connection broke: resumable below if the server gave event ids.
      }
      if (id === undefined || !this.hooks.isPending(id) || this.ended) return;
      if (parser.lastEventId === undefined || resumes >= MAX_RESUMES) {
        throw new McpError('crashed', `MCP server ${this.o.label} closed the connection before answering ${what}`);
      }
      await new Promise((r) => setTimeout(r, Math.min(parser.retryMs ?? 0, MAX_RETRY_DELAY_MS)));
      if (signal.aborted) return;
      res = await this.o.request(this.o.url, {
        method: 'GET',
        headers: this.headers({ accept: 'text/event-stream', 'last-event-id': parser.lastEventId }),
        signal,
        timeoutMs: NO_DEADLINE,
        dropOnCrossOrigin: this.ownHeaderNames,
      });
      if (res.status !== 200 || !(res.headers['content-type'] ?? '').toLowerCase().startsWith('text/event-stream')) {
        res.body.destroy();
        throw new McpError('crashed', `MCP server ${this.o.label} closed the connection before answering ${what}, and resuming the stream failed (HTTP ${res.status})`);
      }
      this.o.logger.debug('mcp event stream resumed', { server: this.o.label, request: what });
    }
  }

  /** One message of the exchange of `what`; one nested too deep fails that exchange (McpError 'protocol'). */
  private deliver(text: string, what: string): void {
    const r = parseInbound(text);
    if (r.ok) return this.hooks.onMessage(redactValue(r.value, this.secrets));
    if (r.why === 'too-deep') throw new McpError('protocol', `MCP server ${this.o.label} answered ${what} with a message nested deeper than ${MAX_MESSAGE_DEPTH} levels`);
    // The first few are logged, as the stdio channel's garbage lines: a server must not fill the log with them.
    if (++this.garbage <= 5) this.o.logger.warn('mcp server sent a body that is not JSON (ignored)', { server: this.o.label, request: what, body: clip(this.redact(text), 200) });
  }

  private toMcpError(e: unknown, what: string): McpError {
    const label = this.o.label;
    if (e instanceof McpError) return e;
    if (e instanceof NetworkDenied) {
      return new McpError('network-denied', `MCP server ${label}: the sandbox refused the request: ${e.message}`, { data: { reason: e.reason } });
    }
    if (e instanceof FetchFailed) {
      if (e.kind === 'invalid-url') return new McpError('config', `MCP server ${label}: ${e.message}`);
      const cause = (e.cause as Error | undefined)?.message;
      const why = e.kind === 'timeout' ? 'no answer in time' : this.redact(cause ? `${e.message} (${cause})` : e.message);
      return new McpError('unreachable', `cannot reach MCP server ${label} (${what}): ${why}`);
    }
    return new McpError('unreachable', `cannot reach MCP server ${label} (${what}): ${this.redact(String((e as Error)?.message ?? e))}`);
  }
}

/** The body as text, or undefined when it is over `max` bytes (the stream is destroyed then). */
async function readText(res: GuardedResponse, max: number): Promise<string | undefined> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const c of res.body as AsyncIterable<Uint8Array>) {
    size += c.byteLength;
    if (size > max) {
      res.body.destroy();
      return undefined;
    }
    chunks.push(c);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseRpcError(body: string): { id: unknown; message: string } | undefined {
  try {
    const m = JSON.parse(body) as unknown;
    if (isObj(m) && isObj(m.error) && typeof m.error.message === 'string') return { id: m.id, message: m.error.message };
  } catch {
    /* not JSON */
  }
  return undefined;
}
