// stdio transport (spec §9.2): NDJSON, one JSON-RPC message per line. stdout carries protocol
// messages only. Streams are injected so tests need no monkey-patching.
import { NdjsonDecoder, encodeFrame, DEFAULT_MAX_FRAME_BYTES, type FrameSink } from '../protocol/framing.ts';
import type { InboundFrame, Transport } from '../kernel/ports.ts';
import type { JsonRpcMessage } from '../protocol/jsonrpc.ts';

export interface ByteSource {
  on(event: 'data', fn: (chunk: Uint8Array | string) => void): unknown;
  on(event: 'end' | 'close', fn: () => void): unknown;
  on(event: 'error', fn: (err: Error) => void): unknown;
  /** Release the underlying descriptor so the process can exit (a signal arrived, stdin still open). */
  destroy?(): unknown;
}
export interface TextSink {
  write(s: string): unknown;
  on(event: 'error', fn: (err: Error) => void): unknown;
}

export interface StdioOptions {
  input: ByteSource;
  output: TextSink;
  maxFrameBytes?: number;
  /**
   * What is already waiting on the input, read without blocking (src/node/stdin-now.ts) when the runtime calls
   * readWaiting(). The input stream continues after those bytes.
   */
  readNow?: () => Uint8Array | undefined;
}

export interface StdioTransport extends Transport {
  /**
   * Handle now what the client has already written, without waiting for a turn of the event loop. The runtime
   * calls it once everything a frame may need is set up (after `--start` opened its session): the frames then
   * meet the state they would have met a turn later. Does nothing before start() or without `readNow`.
   */
  readWaiting(): void;
}

export function createStdioTransport(opts: StdioOptions): StdioTransport {
  const decoder = new NdjsonDecoder(opts.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES);
  const enc = new TextEncoder();
  let open = true;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((r) => (resolveClosed = r));
  const finish = () => {
    if (!open) return;
    open = false;
    resolveClosed();
  };
  // A reader that went away (EPIPE) must not crash the runtime; we stop writing.
  let writable = true;
  const out = opts.output;
  out.on('error', () => {
    writable = false;
  });
  // Replies produced together (a chunk of pipelined requests answered in the same microtask drain)
  // reach the OS in one write: they are joined into one string, written from the nextTick queue,
  // which runs as soon as the code producing them yields, before any I/O or timer. Order is
  // unchanged and no reply waits for I/O. One string costs less than corking and a writev of one
  // buffer per reply (BENCH.md "Tool calls", round 5).
  let pending = '';
  const flush = () => {
    const s = pending;
    pending = '';
    if (!writable) return;
    // Runs from the nextTick queue, outside the router's guard: a writer that throws (closed stream) stops
    // the output, never the runtime.
    try {
      out.write(s);
    } catch {
      writable = false;
    }
  };
  const write = (msg: JsonRpcMessage | JsonRpcMessage[]) => {
    if (!writable) return;
    if (pending === '') afterTick(flush);
    pending += encodeFrame(msg);
  };
  let started: FrameSink | undefined;
  return {
    name: 'stdio',
    closed,
    readWaiting() {
      if (!started || !open) return;
      const waiting = opts.readNow?.();
      if (waiting) decoder.feed(waiting, started);
    },
    start(deliver) {
      const sink: FrameSink = {
        frame: (text) => deliver({ payload: { text }, reply: write }),
        oversize: (bytes, limit) => deliver({ payload: { error: 'oversize', bytes, limit }, reply: write }),
        encoding: () => deliver({ payload: { error: 'encoding' }, reply: write }),
      };
      started = sink;
      opts.input.on('data', (chunk) => decoder.feed(typeof chunk === 'string' ? enc.encode(chunk) : chunk, sink));
      opts.input.on('end', () => {
        decoder.finish(sink);
        finish();
      });
      opts.input.on('close', finish);
      opts.input.on('error', finish);
    },
    notify: write,
    async close() {
      finish();
      opts.input.destroy?.();
    },
  };
}

/** Run `fn` once the current synchronous code or microtask drain ends (Node's nextTick queue; a microtask elsewhere). */
const afterTick: (fn: () => void) => void =
  typeof process === 'object' && typeof process?.nextTick === 'function' ? (fn) => process.nextTick(fn) : (fn) => queueMicrotask(fn);
