// stdio transport (spec §9.2): NDJSON, one JSON-RPC message per line. stdout carries protocol
// messages only. Streams are injected so tests need no monkey-patching.
import { NdjsonDecoder, encodeFrame, DEFAULT_MAX_FRAME_BYTES } from '../protocol/framing.ts';
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

export function createStdioTransport(opts: { input: ByteSource; output: TextSink; maxFrameBytes?: number }): Transport {
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
  opts.output.on('error', () => {
    writable = false;
  });
  const write = (msg: JsonRpcMessage | JsonRpcMessage[]) => {
    if (writable) opts.output.write(encodeFrame(msg));
  };
  return {
    name: 'stdio',
    closed,
    start(deliver) {
      const emit = (events: ReturnType<NdjsonDecoder['push']>) => {
        for (const e of events) {
          const payload: InboundFrame['payload'] =
            e.type === 'frame' ? { text: e.text } : e.type === 'oversize' ? { error: 'oversize', bytes: e.bytes, limit: e.limit } : { error: 'encoding' };
          deliver({ payload, reply: write });
        }
      };
      opts.input.on('data', (chunk) => emit(decoder.push(typeof chunk === 'string' ? enc.encode(chunk) : chunk)));
      opts.input.on('end', () => {
        emit(decoder.end());
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
