// Server-sent events parser, WHATWG HTML "Interpreting an event stream": lines end in CRLF, LF or
// CR; a line starting with ':' is a comment; `data` lines accumulate joined by '\n'; a blank line
// dispatches; an event with no data line is never dispatched; an unterminated event at end of
// stream is discarded. Incremental: text may be cut anywhere, including between CR and LF.
export interface SseEvent {
  /** `event` field, or "message" when absent. */
  event: string;
  data: string;
  id?: string;
}

/** A single line longer than this is not an event stream we will buffer. */
export const MAX_SSE_LINE = 4 * 1024 * 1024;

export class SseParser {
  private partial = '';
  private afterCR = false;
  private first = true;
  private data: string[] = [];
  private event = '';
  private id: string | undefined;

  constructor(private readonly onEvent: (e: SseEvent) => void) {}

  /** Feed decoded text (decode bytes with a streaming TextDecoder so UTF-8 may be split too). */
  push(text: string): void {
    let i = 0;
    if (this.first && text.length > 0) {
      this.first = false;
      if (text.charCodeAt(0) === 0xfeff) i = 1; // a leading BOM is ignored
    }
    if (this.afterCR && i < text.length) {
      this.afterCR = false;
      if (text.charCodeAt(i) === 10) i++; // the LF of a CRLF split across two chunks
    }
    let start = i;
    for (; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      const line = this.partial + text.slice(start, i);
      this.partial = '';
      if (c === 13) {
        if (i + 1 === text.length) this.afterCR = true;
        else if (text.charCodeAt(i + 1) === 10) i++;
      }
      start = i + 1;
      this.line(line);
    }
    this.partial += text.slice(start);
    if (this.partial.length > MAX_SSE_LINE) throw new RangeError(`event stream line longer than ${MAX_SSE_LINE} characters`);
  }

  private line(line: string): void {
    if (line === '') return this.dispatch();
    if (line.charCodeAt(0) === 58) return; // ':' comment (keep-alives)
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
    else if (field === 'id' && !value.includes('\0')) this.id = value;
    // `retry` and unknown fields are ignored: we never reconnect a completion stream.
  }

  private dispatch(): void {
    const data = this.data;
    const event = this.event || 'message';
    this.data = [];
    this.event = '';
    if (data.length === 0) return;
    this.onEvent(this.id === undefined ? { event, data: data.join('\n') } : { event, data: data.join('\n'), id: this.id });
  }
}
