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
  /** Stop and restart reading (back-pressure from the output); a source without them is never held. */
  pause?(): unknown;
  resume?(): unknown;
}
export interface TextSink {
  /** `false` (a Node Writable above its high-water mark) means a 'drain' will follow; anything else: room. */
  write(s: string | Uint8Array): unknown;
  on(event: 'error', fn: (err: Error) => void): unknown;
  on(event: 'drain', fn: () => void): unknown;
}

export interface StdioOptions {
  /**
   * The streams, opened at start(): on Node, creating process.stdin or process.stdout loads the stream and net
   * modules, which a command that never serves stdio (`claw validate`) need not pay for.
   */
  input: () => ByteSource;
  output: () => TextSink;
  maxFrameBytes?: number;
  /** Replies held for a slow reader before the input is paused (default OUTPUT_HOLD_BYTES). */
  holdOutputBytes?: number;
}

/**
 * How much output may wait for a reader before claw stops reading requests. Not the stream's 16 KB high-water
 * mark: a client that writes a batch of requests before it reads any reply (a shell pipeline, a test harness)
 * would then deadlock as soon as the replies to 64 KB of requests outgrew the 64 KB pipe; 4 MB of replies is some
 * 30,000 status answers, and bounded on a 256 MB board.
 */
export const OUTPUT_HOLD_BYTES = 4 * 1024 * 1024;

export function createStdioTransport(opts: StdioOptions): Transport {
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
  let out: TextSink | undefined;
  // Back-pressure: a reader that stops reading stdout while its requests keep coming made every reply wait in
  // the stream's buffer, without bound (measured: claw.status pipelined to a reader that never read grew the
  // runtime from 70 to 312 MB in 7 s). Once OUTPUT_HOLD_BYTES wait, the input is paused, so the OS pipe fills
  // and the client's own writes wait; requests already read are still answered and nothing is dropped.
  // 'drain' (the buffer emptied) restarts the reading. What waits is counted here, from the first write the sink
  // called full until its 'drain': Bun's process.stdout reports writableLength 0 while it buffers.
  const holdAt = opts.holdOutputBytes ?? OUTPUT_HOLD_BYTES;
  let waiting = 0;
  let input: ByteSource | undefined;
  let held = false;
  const release = () => {
    waiting = 0;
    if (!held) return;
    held = false;
    input?.resume?.();
  };
  const hold = () => {
    if (held || !input?.pause || !input.resume) return;
    held = true;
    input.pause();
  };
  const stream = (): TextSink => {
    if (!out) {
      out = opts.output();
      out.on('error', () => {
        writable = false;
        release(); // nothing more will drain; the input must still reach its end so the runtime can stop
      });
      out.on('drain', release);
    }
    return out;
  };
  // Replies produced together (a chunk of pipelined requests answered in the same microtask drain)
  // reach the OS in one write: they are joined into one string, written from the nextTick queue,
  // which runs as soon as the code producing them yields, before any I/O or timer. Order is
  // unchanged and no reply waits for I/O. One string costs less than corking and a writev of one
  // buffer per reply.
  let pending = '';
  const flush = () => {
    const s = pending;
    pending = '';
    if (!writable) return;
    // Runs from the nextTick queue, outside the router's guard: a writer that throws (closed stream) stops
    // the output, never the runtime.
    try {
      if (stream().write(s) !== false) waiting = 0;
      else if ((waiting += s.length) >= holdAt) hold();
    } catch {
      writable = false;
      release();
    }
  };
  const write = (msg: JsonRpcMessage | JsonRpcMessage[]) => {
    if (!writable) return;
    if (pending === '') afterTick(flush);
    pending += encodeFrame(msg);
  };
  const listen = (sink: FrameSink) => {
    stream(); // its 'error' listener from now on, as for the input
    input = opts.input();
    input.on('data', (chunk) => decoder.feed(typeof chunk === 'string' ? enc.encode(chunk) : chunk, sink));
    input.on('end', () => {
      decoder.finish(sink);
      finish();
    });
    input.on('close', finish);
    input.on('error', finish);
  };
  return {
    name: 'stdio',
    closed,
    start(deliver) {
      listen({
        frame: (text) => deliver({ payload: { text }, reply: write }),
        oversize: (bytes, limit) => deliver({ payload: { error: 'oversize', bytes, limit }, reply: write }),
        encoding: () => deliver({ payload: { error: 'encoding' }, reply: write }),
      });
    },
    notify: write,
    async close() {
      finish();
      input?.destroy?.();
    },
  };
}

/** Run `fn` once the current synchronous code or microtask drain ends (Node's nextTick queue; a microtask elsewhere). */
const afterTick: (fn: () => void) => void =
  typeof process === 'object' && typeof process?.nextTick === 'function' ? (fn) => process.nextTick(fn) : (fn) => queueMicrotask(fn);
