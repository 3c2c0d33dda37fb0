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
  write(s: string | Uint8Array): unknown;
  on(event: 'error', fn: (err: Error) => void): unknown;
}

export interface StdioOptions {
  /**
   * The streams, opened when first needed: at start(), or with `readNow` in the check phase start() schedules
   * (after the replies to what readWaiting found waiting), or in readWaiting when nothing was waiting. On Node,
   * creating process.stdin or process.stdout loads the stream and net modules, which the first replies need not
   * wait for (docs/startup.md "Round 7").
   */
  input: () => ByteSource;
  output: () => TextSink;
  maxFrameBytes?: number;
  /**
   * What is already waiting on the input, read without blocking (src/node/stdin-now.ts) when the runtime calls
   * readWaiting(). The input stream continues after those bytes.
   */
  readNow?: () => Uint8Array | undefined;
  /**
   * Writes a reply synchronously without the output stream (src/node/stdout-now.ts); returns what it could not
   * write, which then goes to the stream. Used only until the input stream is open.
   */
  writeNow?: (text: string) => Uint8Array | undefined;
}

export interface StdioTransport extends Transport {
  /**
   * Handle now what the client has already written, without waiting for a turn of the event loop. The runtime
   * calls it once everything a frame may need is set up (after `--start` opened its session). If that set-up
   * took a turn of the event loop, the input stream is open already and this does nothing: the stream delivers
   * the same bytes. Does nothing before start().
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
  let out: TextSink | undefined;
  const stream = (): TextSink => {
    if (!out) {
      out = opts.output();
      out.on('error', () => {
        writable = false;
      });
    }
    return out;
  };
  // Replies go straight to the descriptor until the input stream opens (writeNow), then to the output stream:
  // a direct write is complete when it returns, so the order on the wire is the order of the writes.
  let direct = opts.writeNow;
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
      let rest: string | Uint8Array | undefined = s;
      if (direct) {
        rest = direct(s);
        if (rest !== undefined) direct = undefined; // would block: the stream queues the rest and all after it
      }
      if (rest !== undefined) stream().write(rest);
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
  let input: ByteSource | undefined;
  let listening = false;
  const listen = () => {
    if (listening || !open) return;
    listening = true;
    direct = undefined;
    stream(); // its 'error' listener from now on, as for the input
    input = opts.input();
    const sink = started!;
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
    readWaiting() {
      if (!started || !open || listening) return;
      const waiting = opts.readNow?.();
      // The stream opens in the check phase start() scheduled, after the replies to what was waiting: they are
      // produced within this turn (microtasks, nextTick). Nothing waiting: no reason to wait for it.
      if (waiting) decoder.feed(waiting, started);
      else listen();
    },
    start(deliver) {
      started = {
        frame: (text) => deliver({ payload: { text }, reply: write }),
        oversize: (bytes, limit) => deliver({ payload: { error: 'oversize', bytes, limit }, reply: write }),
        encoding: () => deliver({ payload: { error: 'encoding' }, reply: write }),
      };
      // Without readNow nothing is read at once: the stream now. With it, the runtime calls readWaiting when it
      // is set up, within this turn; the stream opens in its check phase (or later, if set-up took turns: then
      // readWaiting finds the stream open and does nothing).
      if (opts.readNow) setImmediate(listen);
      else listen();
    },
    notify: write,
    async close() {
      finish();
      if (listening) input?.destroy?.();
    },
  };
}

/** Run `fn` once the current synchronous code or microtask drain ends (Node's nextTick queue; a microtask elsewhere). */
const afterTick: (fn: () => void) => void =
  typeof process === 'object' && typeof process?.nextTick === 'function' ? (fn) => process.nextTick(fn) : (fn) => queueMicrotask(fn);
