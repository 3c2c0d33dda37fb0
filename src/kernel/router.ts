// The router: the only writer of replies (ARCHITECTURE "one way through").
// Frame → JSON → envelope → batch → dispatch → reply with the request's exact id.
// Handlers return values or throw ProtocolError; anything else becomes -32603 without internals.
import { ErrorCode, ProtocolError } from '../protocol/errors.ts';
import { classify, failure, invalidRequest, success, type JsonRpcId, type JsonRpcResponse } from '../protocol/jsonrpc.ts';
import { DEFAULT_MAX_DEPTH, UNPARSED_DEPTH, textDepth } from '../protocol/depth.ts';
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

/** A handler's value, or a promise of it: a plain value is answered at once (no promise, no microtask). */
export type Dispatch = (method: string, params: unknown, ctx: CallContext) => unknown;

export interface RouterOptions {
  dispatch: Dispatch;
  inflight: InflightTracker;
  log: Logger;
  maxDepth?: number;
  /** Called for JSON-RPC responses arriving from peers (agent-initiated requests). */
  onResponse?: (msg: JsonRpcResponse) => void;
  /**
   * Masks resolved secret values in an error's message and data before it goes on the wire (runtime
   * profile §7): errors quote external text (an MCP server's stderr, a tool's message), so this is
   * done here, once, for every error reply.
   */
  redact?: (v: unknown) => unknown;
  /** Told about every error reply to a method call (telemetry's `errors` category, spec §5.11). */
  onError?: (method: string, err: ProtocolError) => void;
}

/**
 * Elements in one batch (JSON-RPC 2.0 §6 sets no bound): each costs a reply object, so without one a 4 MB frame
 * of `[0,0,…]` is two million replies. A larger batch is one -32600, nothing of it run.
 */
export const MAX_BATCH = 1000;

export class Router {
  private readonly maxDepth: number;
  constructor(private readonly opts: RouterOptions) {
    this.maxDepth = opts.maxDepth ?? DEFAULT_MAX_DEPTH;
  }

  /**
   * Handle one inbound frame from `transport`. Never throws. The frame is parsed and dispatched
   * synchronously (in arrival order); a handler that returns a plain value is answered at once,
   * one that returns a promise when it settles. No promise is created here apart from the one the
   * in-flight tracker needs per request.
   */
  handle(frame: InboundFrame, transport: string): void {
    try {
      this.process(frame, transport);
    } catch (err) {
      this.opts.log.error('router failure', { error: String(err) });
    }
  }

  private process(frame: InboundFrame, transport: string): void {
    const p = frame.payload;
    if ('error' in p) {
      const err =
        p.error === 'oversize'
          ? new ProtocolError(ErrorCode.InvalidRequest, `Invalid request: frame of ${p.bytes} bytes exceeds the ${p.limit}-byte limit`, {
              limit: p.limit,
            })
          : new ProtocolError(ErrorCode.ParseError, 'Parse error: frame is not valid UTF-8');
      this.send(frame, failure(null, err));
      return;
    }
    // Short frames skip the scan: each level takes an opening and a closing bracket.
    const depth = p.text.length > 2 * this.maxDepth ? textDepth(p.text, Math.max(UNPARSED_DEPTH, this.maxDepth)) : 0;
    if (depth > Math.max(UNPARSED_DEPTH, this.maxDepth)) {
      this.send(frame, failure(null, invalidRequest(`message nests deeper than ${this.maxDepth} levels`)));
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(p.text);
    } catch (e) {
      this.send(frame, failure(null, new ProtocolError(ErrorCode.ParseError, `Parse error: ${(e as Error).message}`)));
      return;
    }
    // Parsed, the text's depth is the value's: refused here, so the answer can echo the request's id.
    if (depth > this.maxDepth) {
      const id = typeof value === 'object' && value !== null && !Array.isArray(value) ? idOf((value as any).id) : null;
      this.send(frame, failure(id, invalidRequest(`message nests deeper than ${this.maxDepth} levels`)));
      return;
    }
    if (Array.isArray(value)) {
      // JSON-RPC 2.0 §6: an empty batch is one invalid request; otherwise answer each request,
      // never the notifications, and send nothing at all when only notifications came.
      if (value.length === 0) {
        this.send(frame, failure(null, invalidRequest('empty batch')));
        return;
      }
      if (value.length > MAX_BATCH) {
        this.send(frame, failure(null, invalidRequest(`batch of ${value.length} messages is over the limit of ${MAX_BATCH}: send them in smaller batches`)));
        return;
      }
      frame.parsed?.(value);
      const replies: (JsonRpcResponse | undefined)[] = new Array(value.length);
      let pending = value.length;
      value.forEach((v, i) =>
        this.one(v, transport, (reply) => {
          replies[i] = reply;
          if (--pending > 0) return;
          const out = replies.filter((r): r is JsonRpcResponse => r !== undefined);
          if (out.length > 0) this.send(frame, out);
        }),
      );
      return;
    }
    frame.parsed?.(value);
    this.one(value, transport, (reply) => {
      if (reply) this.send(frame, reply);
    });
  }

  /** Process one message; `done` gets its reply (undefined for notifications and responses) once it is known. */
  private one(value: unknown, transport: string, done: (reply: JsonRpcResponse | undefined) => void): void {
    const c = classify(value);
    switch (c.type) {
      case 'invalid':
        done(failure(c.id, invalidRequest(c.reason)));
        return;
      case 'response':
        this.opts.onResponse?.(c.msg);
        done(undefined);
        return;
      case 'notification': {
        const { method, params } = c.msg;
        // Notifications are never answered (JSON-RPC 2.0 §4.1), but a failure is worth a log line.
        const failed = (err: unknown) => {
          this.opts.log.debug('notification failed', { method, error: describe(err) });
          done(undefined);
        };
        let work: unknown;
        try {
          work = this.opts.dispatch(method, params, { transport });
        } catch (err) {
          failed(err);
          return;
        }
        if (isThenable(work)) {
          const inflight = this.opts.inflight;
          const token = inflight.begin();
          inflight.hold(token);
          work.then(
            () => {
              inflight.end(token);
              done(undefined);
            },
            (err) => {
              inflight.end(token);
              failed(err);
            },
          );
        } else done(undefined);
        return;
      }
      case 'request': {
        const { id, method, params } = c.msg;
        // The token exists before the handler runs (claw.shutdown drains what arrived before it).
        // A handler answering with a promise is held in flight until right before its reply; one
        // answering synchronously never is (nothing can drain while it runs). No promise of our own.
        const inflight = this.opts.inflight;
        const token = inflight.begin();
        const ctx: CallContext = { id, token, transport };
        let result: unknown;
        try {
          result = this.opts.dispatch(method, params, ctx);
        } catch (err) {
          done(failure(id, this.toProtocolError(err, method)));
          return;
        }
        if (isThenable(result)) {
          inflight.hold(token);
          result.then(
            (v) => {
              inflight.end(token);
              done(success(id, v));
            },
            (err) => {
              inflight.end(token);
              done(failure(id, this.toProtocolError(err, method)));
            },
          );
        } else done(success(id, result));
      }
    }
  }

  /** Hand a reply to the transport; a transport that throws (EPIPE…) is logged, never propagated. */
  private send(frame: InboundFrame, reply: JsonRpcResponse | JsonRpcResponse[]): void {
    try {
      frame.reply(reply);
    } catch (err) {
      this.opts.log.error('router failure', { error: String(err) });
    }
  }

  private toProtocolError(err: unknown, method: string): ProtocolError {
    const e = this.asProtocolError(err, method);
    this.opts.onError?.(method, e);
    return e;
  }

  private asProtocolError(err: unknown, method: string): ProtocolError {
    if (err instanceof ProtocolError) {
      const redact = this.opts.redact;
      if (!redact) return err;
      return new ProtocolError(err.code, redact(err.message) as string, err.data === undefined ? undefined : redact(err.data));
    }
    // Unexpected failure: log it (stderr), answer without internals.
    this.opts.log.error('handler failed', { method, error: describe(err) });
    return new ProtocolError(ErrorCode.InternalError, 'Internal error');
  }
}

function isThenable(x: unknown): x is PromiseLike<unknown> {
  return x instanceof Promise || ((typeof x === 'object' || typeof x === 'function') && x !== null && typeof (x as { then?: unknown }).then === 'function');
}

function idOf(x: unknown): JsonRpcId {
  return typeof x === 'string' || (typeof x === 'number' && Number.isFinite(x)) ? x : null;
}

function describe(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}
