// Server-sent streams of one task's updates (A2A 1.0 §3.1.2 SendStreamingMessage, §3.1.6 SubscribeToTask, JSON-RPC
// §9.4, HTTP+JSON §11.7; 0.3 message/stream, tasks/resubscribe; docs/a2a.md "Streaming"): the Task first, then each
// status or artifact change, closed at a terminal or interrupted state. Bounded: streams per caller and per
// listener, keep-alive comments, and a reader that stops reading is cut off (transports/http/sse.ts) instead of
// being buffered without end; a client that goes away is unsubscribed at once.
import type { ServerResponse } from 'node:http';
import { SseStream } from '../transports/http/sse.ts';
import { A2aError, A2aErrorCode, TooManyRequests } from './errors.ts';
import type { TaskService } from './tasks.ts';
import { streamEndsAt, wireStreamEvent, type WireVersion } from './wire.ts';

export interface StreamLimits {
  /**
   * Streams one caller (its principal) may hold open at once, from any number of addresses; callers sharing an
   * address (a NAT) each have their own.
   */
  perCaller: number;
  /** Streams open at once on one listener, all clients together. */
  total: number;
  /** A comment line this often keeps proxies and clients from timing an idle stream out. */
  keepaliveMs: number;
  /** Bytes written but not yet taken by the client before the stream is cut off. */
  maxBufferedBytes: number;
}

export const STREAM_LIMITS: StreamLimits = { perCaller: 4, total: 32, keepaliveMs: 15_000, maxBufferedBytes: 256 * 1024 };

/**
 * The limits on a listener of `maxConnections`: open streams hold a connection each until their task ends, so
 * together they take at most half of them (at most STREAM_LIMITS.total), and the rest stay for other requests.
 */
export function streamLimitsFor(maxConnections: number): StreamLimits {
  return { ...STREAM_LIMITS, total: Math.max(1, Math.min(STREAM_LIMITS.total, Math.floor(maxConnections / 2))) };
}

/** Too many streams open: HTTP 429 on both bindings (A2A has no code for it; JSON-RPC says internal error). */
export class StreamLimitError extends TooManyRequests {
  constructor(message: string) {
    super(message, 5);
  }
}

/** Open streams per caller, shared by a listener's JSON-RPC and REST routes. */
export class StreamSlots {
  private readonly byCaller = new Map<string, number>();
  private total = 0;
  constructor(readonly limits: StreamLimits = STREAM_LIMITS) {}

  /** A slot for `caller` (call the result to give it back), or undefined when there are too many streams. */
  take(caller: string): (() => void) | undefined {
    const n = this.byCaller.get(caller) ?? 0;
    if (n >= this.limits.perCaller || this.total >= this.limits.total) return undefined;
    this.byCaller.set(caller, n + 1);
    this.total++;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.total--;
      const left = (this.byCaller.get(caller) ?? 1) - 1;
      if (left <= 0) this.byCaller.delete(caller);
      else this.byCaller.set(caller, left);
    };
  }

  open(caller?: string): number {
    return caller === undefined ? this.total : (this.byCaller.get(caller) ?? 0);
  }
}

/**
 * Streams task `id` on `res` until its state ends the stream, the client goes or it stops reading. `frame` wraps
 * each event: a JSON-RPC response (the request's id) or, on REST, the event itself. `release` gives the slot back.
 */
export function streamTask(o: { res: ServerResponse; tasks: TaskService; id: string; version: WireVersion; frame: (event: unknown) => unknown; limits: StreamLimits; release: () => void }): void {
  const t = o.tasks.get(o.id);
  if (o.res.destroyed || o.res.socket?.destroyed) {
    o.release();
    return;
  }
  let ended = false;
  let unsubscribe: (() => void) | undefined;
  const s = new SseStream(o.res, {
    keepaliveMs: o.limits.keepaliveMs,
    maxBufferedBytes: o.limits.maxBufferedBytes,
    onEnd: () => {
      ended = true;
      unsubscribe?.();
      o.release();
    },
  });
  // JSON.stringify never writes a raw newline: one data line per event.
  const event = (payload: unknown) => ({ seq: 0, wire: `data: ${JSON.stringify(o.frame(payload))}\n\n` });
  // Read and subscribed in the same tick: nothing between the snapshot and the first update is lost.
  s.open([event(wireStreamEvent(t, o.version, { snapshot: true }))]);
  if (streamEndsAt(t.state)) s.end();
  if (ended) return;
  unsubscribe = o.tasks.subscribe(t.id, (e) => {
    s.send(event(wireStreamEvent(e.task, o.version, e)));
    if (!e.artifact && streamEndsAt(e.task.state)) s.end();
  });
}
