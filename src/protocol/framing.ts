// NDJSON framing (one JSON-RPC message per line) with a per-frame size cap.
// Works on raw bytes so an oversize or non-UTF-8 frame is detected without buffering it whole:
// past the cap we drop bytes until the next newline, report it once, and the connection goes on.

export const DEFAULT_MAX_FRAME_BYTES = 4 * 1024 * 1024;

export type FrameEvent =
  | { type: 'frame'; text: string }
  | { type: 'oversize'; bytes: number; limit: number }
  | { type: 'encoding' };

const NL = 0x0a;

export class NdjsonDecoder {
  private parts: Uint8Array[] = [];
  private size = 0;
  private dropping = 0; // bytes dropped in the current oversize line (0 = not dropping)
  private readonly utf8 = new TextDecoder('utf-8', { fatal: true });

  constructor(private readonly maxBytes = DEFAULT_MAX_FRAME_BYTES) {}

  /** Feed a chunk; returns the complete frames it finished, in order. */
  push(chunk: Uint8Array): FrameEvent[] {
    const out: FrameEvent[] = [];
    let start = 0;
    while (start <= chunk.length) {
      const nl = chunk.indexOf(NL, start);
      const end = nl === -1 ? chunk.length : nl;
      this.take(chunk.subarray(start, end));
      if (nl === -1) break;
      this.finishLine(out);
      start = nl + 1;
    }
    return out;
  }

  /** End of input: a last line without a newline still counts as a frame. */
  end(): FrameEvent[] {
    const out: FrameEvent[] = [];
    if (this.size > 0 || this.dropping > 0) this.finishLine(out);
    return out;
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

  private finishLine(out: FrameEvent[]): void {
    if (this.dropping > 0) {
      out.push({ type: 'oversize', bytes: this.dropping, limit: this.maxBytes });
      this.dropping = 0;
      return;
    }
    const bytes = this.parts.length === 1 ? this.parts[0] : concat(this.parts, this.size);
    this.parts = [];
    this.size = 0;
    let text: string;
    try {
      text = this.utf8.decode(bytes);
    } catch {
      out.push({ type: 'encoding' });
      return;
    }
    // Tolerate CRLF senders and skip blank keep-alive lines: they are not frames.
    if (text.endsWith('\r')) text = text.slice(0, -1);
    if (text.trim() === '') return;
    out.push({ type: 'frame', text });
  }
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
