// An in-memory transport and its client, connected back to back: for tests, and for embedding a
// runtime in the same process as its operator. Frames are delivered asynchronously (a microtask
// later) and in order, like a real transport; replies go to the client whose frame they answer.
import type { InboundFrame, Transport } from '../kernel/ports.ts';
import type { JsonRpcMessage, JsonRpcNotification, JsonRpcResponse } from '../protocol/jsonrpc.ts';
import { DEFAULT_MAX_FRAME_BYTES } from '../protocol/framing.ts';
import { ClawError } from '../protocol/errors.ts';
import type { RequestOptions, TransportClient } from './client.ts';
import { timerDelay } from '../protocol/delay.ts';

export interface MemoryPair {
  transport: Transport;
  /** A new client (a sender of its own: replies to its frames come back only to it). */
  client(): TransportClient;
}

export function createMemoryPair(opts: { maxFrameBytes?: number; name?: string } = {}): MemoryPair {
  const limit = opts.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  let deliver: ((f: InboundFrame) => void) | undefined;
  const backlog: InboundFrame[] = [];
  let open = true;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((r) => (resolveClosed = r));
  const listeners = new Set<(m: JsonRpcNotification) => void>();
  const enc = new TextEncoder();

  const push = (frame: InboundFrame) => {
    if (!open) throw new ClawError('closed', 'transport closed');
    // Frames are handed over in order on a microtask: a sender never re-enters the router.
    queueMicrotask(() => {
      if (!open) return;
      if (deliver) deliver(frame);
      else backlog.push(frame);
    });
  };

  const transport: Transport = {
    name: opts.name ?? 'memory',
    closed,
    start(fn) {
      deliver = fn;
      for (const f of backlog.splice(0)) fn(f);
    },
    notify(message) {
      const copy = JSON.parse(JSON.stringify(message)) as JsonRpcNotification;
      for (const l of listeners) queueMicrotask(() => l(copy));
    },
    async close() {
      if (!open) return;
      open = false;
      resolveClosed();
    },
  };

  const client = (): TransportClient => {
    const pending = new Map<string, { resolve: (v: unknown) => void }>();
    let seq = 0;
    const frame = (text: string, key: string): InboundFrame => {
      const bytes = enc.encode(text).length;
      return {
        payload: bytes > limit ? { error: 'oversize', bytes, limit } : { text },
        // Serialized like a wire would: the client never shares objects with the agent.
        reply: (m: JsonRpcMessage | JsonRpcMessage[]) => {
          const p = pending.get(key);
          if (!p) return;
          pending.delete(key);
          const copy = JSON.parse(JSON.stringify(m));
          queueMicrotask(() => p.resolve(copy));
        },
      };
    };
    const send = (text: string, o: RequestOptions & { expectReply?: boolean } = {}) => {
      const key = o.requestId ?? `m${++seq}`;
      if (o.expectReply === false) {
        try {
          push(frame(text, key));
        } catch (e) {
          return Promise.reject(e);
        }
        return Promise.resolve(undefined);
      }
      return new Promise<unknown>((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(key);
          reject(new ClawError('timeout', `no reply within ${o.timeoutMs ?? 30_000} ms`));
        }, timerDelay(o.timeoutMs ?? 30_000));
        pending.set(key, {
          resolve: (v) => {
            clearTimeout(timer);
            resolve(v);
          },
        });
        try {
          push(frame(text, key));
        } catch (e) {
          clearTimeout(timer);
          pending.delete(key);
          reject(e);
        }
      });
    };
    return {
      request: (m, o) => send(JSON.stringify(m), o) as Promise<JsonRpcResponse | JsonRpcResponse[]>,
      notify: async (m) => {
        await send(JSON.stringify(m), { expectReply: false });
      },
      sendRaw: send,
      onNotification: (fn) => listeners.add(fn),
      async close() {
        pending.clear();
      },
    };
  };

  return { transport, client };
}
