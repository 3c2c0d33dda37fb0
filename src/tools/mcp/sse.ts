// Server-Sent Events parsing (WHATWG HTML "Parsing an event stream"), as far as MCP Streamable HTTP
// needs it: `data` lines joined with "\n", `id` (the resumption point for Last-Event-ID), `retry`,
// `event` (MCP sends only the default "message" type), comments ignored. Pure and incremental.

export interface SseEvent {
  event: string;
  data: string;
  /** The last event id seen so far in the stream (the WHATWG "last event ID buffer"), if any. */
  id: string | undefined;
}

export class SseParser {
  private buf = '';
  private data: string[] = [];
  private dataBytes = 0;
  private event = '';
  private readonly dec = new TextDecoder();
  lastEventId: string | undefined;
  /** Reconnection delay the server asked for (ms), if any. */
  retryMs: number | undefined;

  /** @param maxEventBytes the largest event data accepted; beyond it push() throws. */
  constructor(private readonly maxEventBytes: number) {}

  push(chunk: Uint8Array | string): SseEvent[] {
    this.buf += typeof chunk === 'string' ? chunk : this.dec.decode(chunk, { stream: true });
    const out: SseEvent[] = [];
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.buf);
      if (!m) break;
      // A lone \r at the very end may be the first half of \r\n: wait for the next chunk.
      if (m[0] === '\r' && m.index === this.buf.length - 1) break;
      const line = this.buf.slice(0, m.index);
      this.buf = this.buf.slice(m.index + m[0].length);
      this.line(line, out);
    }
    if (this.buf.length + this.dataBytes > this.maxEventBytes) throw new Error(`an event over ${this.maxEventBytes} bytes`);
    return out;
  }

  private line(line: string, out: SseEvent[]): void {
    if (line === '') {
      if (this.data.length > 0) out.push({ event: this.event || 'message', data: this.data.join('\n'), id: this.lastEventId });
      this.data = [];
      this.dataBytes = 0;
      this.event = '';
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'data':
        this.data.push(value);
        this.dataBytes += value.length + 1;
        if (this.dataBytes > this.maxEventBytes) throw new Error(`an event over ${this.maxEventBytes} bytes`);
        break;
      case 'event':
        this.event = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.lastEventId = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.retryMs = Number(value);
        break;
    }
  }
}
