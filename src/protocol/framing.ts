// NDJSON framing (one JSON-RPC message per line) with a per-frame size cap.
// Works on raw bytes so an oversize or non-UTF-8 frame is detected without buffering it whole:
// past the cap we drop bytes until the next newline, report it once, and the connection goes on.

export const DEFAULT_MAX_FRAME_BYTES = 4 * 1024 * 1024;

export type FrameEvent =
  | { type: 'frame'; text: string }
  | { type: 'oversize'; bytes: number; limit: number }
  | { type: 'encoding' };

const NL = 0x0a;

/** Receives what a decoder finds, in order (the allocation-free form of FrameEvent). */
export interface FrameSink {
  frame(text: string): void;
  oversize(bytes: number, limit: number): void;
  encoding(): void;
}

export class NdjsonDecoder {
  private parts: Uint8Array[] = [];
  private size = 0;
  private dropping = 0; // bytes dropped in the current oversize line (0 = not dropping)
  private readonly utf8 = new TextDecoder('utf-8', { fatal: true });

  constructor(private readonly maxBytes = DEFAULT_MAX_FRAME_BYTES) {}

  /** Feed a chunk; returns the complete frames it finished, in order. */
  push(chunk: Uint8Array): FrameEvent[] {
    const out: FrameEvent[] = [];
    this.feed(chunk, collect(out));
    return out;
  }

  /** End of input: a last line without a newline still counts as a frame. */
  end(): FrameEvent[] {
    const out: FrameEvent[] = [];
    this.finish(collect(out));
    return out;
  }

  /** End of input, reported to `sink`. */
  finish(sink: FrameSink): void {
    if (this.size > 0 || this.dropping > 0) this.finishLine(sink);
  }

  /**
   * Feed a chunk; what it completes goes to `sink`, in order. Lines lying entirely inside the chunk
   * are not copied, and are decoded with one TextDecoder call for all of them; only the unfinished
   * tail of a chunk is copied (the caller may reuse its buffer).
   */
  feed(chunk: Uint8Array, sink: FrameSink): void {
    // A Buffer's subarray goes through its species constructor; a plain view is cheaper.
    const bytes = chunk.constructor === Uint8Array ? chunk : new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const first = bytes.indexOf(NL);
    if (first === -1) {
      this.take(bytes);
      return;
    }
    let start = 0;
    if (this.size > 0 || this.dropping > 0) {
      // The first line completes what earlier chunks began.
      this.take(bytes.subarray(0, first));
      this.finishLine(sink);
      start = first + 1;
    }
    const last = bytes.lastIndexOf(NL);
    if (last >= start) {
      this.lines(bytes, start, last, sink);
      start = last + 1;
    }
    if (start < bytes.length) this.take(bytes.subarray(start));
  }

  /** The complete lines in bytes[start, end), where end is a newline's offset. */
  private lines(bytes: Uint8Array, start: number, end: number, sink: FrameSink): void {
    if (end - start <= this.maxBytes) {
      // No line here can exceed the cap: decode them all at once, then split the text.
      let text: string | undefined;
      try {
        text = this.utf8.decode(bytes.subarray(start, end));
      } catch {
        // Some line is not UTF-8: decode line by line below, so only that one is refused.
      }
      if (text !== undefined) {
        let from = 0;
        for (;;) {
          const nl = text.indexOf('\n', from);
          let line = text.slice(from, nl === -1 ? text.length : nl);
          // Each line is its own decode, which drops one leading BOM; the first one's already went.
          if (from > 0 && line.charCodeAt(0) === 0xfeff) line = line.slice(1);
          emit(line, sink);
          if (nl === -1) return;
          from = nl + 1;
        }
      }
    }
    let from = start;
    for (;;) {
      const nl = bytes.indexOf(NL, from);
      const stop = nl === -1 || nl > end ? end : nl;
      if (stop - from > this.maxBytes) sink.oversize(stop - from, this.maxBytes);
      else this.decodeLine(bytes.subarray(from, stop), sink);
      if (stop === end) return;
      from = stop + 1;
    }
  }

  private take(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    if (this.dropping > 0 || this.size + bytes.length > this.maxBytes) {
      this.dropping += this.size + bytes.length;
      this.parts = [];
      this.size = 0;
      return;
    }
    this.parts.push(bytes.slice());
    this.size += bytes.length;
  }

  private finishLine(sink: FrameSink): void {
    if (this.dropping > 0) {
      const bytes = this.dropping;
      this.dropping = 0;
      sink.oversize(bytes, this.maxBytes);
      return;
    }
    const bytes = this.parts.length === 1 ? this.parts[0] : concat(this.parts, this.size);
    this.parts = [];
    this.size = 0;
    this.decodeLine(bytes, sink);
  }

  private decodeLine(bytes: Uint8Array, sink: FrameSink): void {
    let text: string;
    try {
      text = this.utf8.decode(bytes);
    } catch {
      sink.encoding();
      return;
    }
    emit(text, sink);
  }
}

/** One decoded line: tolerate CRLF senders and skip blank keep-alive lines (they are not frames). */
function emit(text: string, sink: FrameSink): void {
  if (text.charCodeAt(text.length - 1) === 0x0d) text = text.slice(0, -1);
  const c = text.charCodeAt(0);
  if (!(c > 0x20 && c < 0x7f) && text.trim() === '') return;
  sink.frame(text);
}

function collect(out: FrameEvent[]): FrameSink {
  return {
    frame: (text) => out.push({ type: 'frame', text }),
    oversize: (bytes, limit) => out.push({ type: 'oversize', bytes, limit }),
    encoding: () => out.push({ type: 'encoding' }),
  };
}

function concat(parts: Uint8Array[], size: number): Uint8Array {
  const buf = new Uint8Array(size);
  let off = 0;
  for (const p of parts) {
    buf.set(p, off);
    off += p.length;
  }
  return buf;
}

/** Serialize one message (or batch) as an NDJSON line. JSON.stringify never emits raw newlines. */
export function encodeFrame(msg: unknown): string {
  return `${JSON.stringify(msg)}\n`;
}
