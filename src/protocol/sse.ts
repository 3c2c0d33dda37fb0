// Server-Sent Events: the text/event-stream format (WHATWG HTML §9.2.6 "Parsing an event stream"), read
// incrementally for the clients that receive it (MCP Streamable HTTP, A2A streaming, model providers).
// Lines end in CRLF, LF or CR (text may be cut anywhere, between CR and LF included); one leading BOM is
// ignored; a line starting with ':' is a comment; `data` lines are joined with "\n"; a blank line
// dispatches; an event without data is not dispatched, an unterminated one at the end of the stream is
// discarded. One event is capped in bytes: a peer cannot make this process buffer without bound.
import { ClawError } from './errors.ts';
import { utf8Length } from './utf8.ts';

export const DEFAULT_MAX_EVENT_BYTES = 1024 * 1024;

export interface SseEvent {
  /** The `event` field, "message" when absent. */
  event: string;
  data: string;
  /** The last event id seen so far in the stream (the WHATWG "last event ID buffer"), if any. */
  id: string | undefined;
}

/** An event (or a line still unterminated) grew past the cap. */
export class SseEventTooLarge extends ClawError {
  constructor(readonly limit: number) {
    super('sse-event-too-large', `an event over ${limit} bytes`);
    this.name = 'SseEventTooLarge';
  }
}

export class SseParser {
  private line = '';
  /** The open line's first six characters: enough to tell a `data:` line, read without flattening the line. */
  private head = '';
  private afterCR = false;
  private started = false;
  private data: string[] = [];
  private dataBytes = 0;
  private type = '';
  // The BOM is dropped here, once, whether the stream comes as bytes or as text.
  private readonly dec = new TextDecoder('utf-8', { ignoreBOM: true });
  lastEventId: string | undefined;
  /** Reconnection delay the server asked for (ms), if any. */
  retryMs: number | undefined;
  private dataDone = 0;

  /** @param maxEventBytes the largest event (its data lines, as UTF-8) accepted; beyond it push() throws. */
  constructor(readonly maxEventBytes = DEFAULT_MAX_EVENT_BYTES) {}

  /**
   * Characters of `data` values read so far, the value of a data line still open included. Comments,
   * blank lines and other fields leave it as it was: a reader tells an answer's bytes from keep-alives
   * by whether this grew.
   */
  get dataChars(): number {
    const h = this.head;
    return this.dataDone + (h.startsWith('data:') ? Math.max(0, this.line.length - (h.charCodeAt(5) === 32 ? 6 : 5)) : 0);
  }

  /** The events that `chunk` completes, in order. */
  push(chunk: Uint8Array | string): SseEvent[] {
    let text = typeof chunk === 'string' ? chunk : this.dec.decode(chunk, { stream: true });
    if (!this.started && text !== '') {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    const out: SseEvent[] = [];
    let i = 0;
    // The LF of a CRLF whose CR ended the previous chunk (the line was taken at the CR).
    if (this.afterCR && text !== '') {
      this.afterCR = false;
      if (text.charCodeAt(0) === 10) i = 1;
    }
    let start = i;
    for (; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      const line = this.line + text.slice(start, i);
      this.line = '';
      if (c === 13) {
        if (i + 1 === text.length) this.afterCR = true;
        else if (text.charCodeAt(i + 1) === 10) i++;
      }
      start = i + 1;
      this.field(line, out);
    }
    const rest = text.slice(start);
    if (this.line.length < 6) this.head = (this.line + rest.slice(0, 6)).slice(0, 6);
    this.line += rest;
    // A line not yet ended counts too (its UTF-16 length is at most its UTF-8 size): no unbounded buffer.
    if (this.dataBytes + this.line.length > this.maxEventBytes) throw new SseEventTooLarge(this.maxEventBytes);
    return out;
  }

  private field(line: string, out: SseEvent[]): void {
    if (line === '') {
      if (this.data.length > 0) out.push({ event: this.type || 'message', data: this.data.join('\n'), id: this.lastEventId });
      this.data = [];
      this.dataBytes = 0;
      this.type = '';
      return;
    }
    if (line.charCodeAt(0) === 58) return; // ':' a comment (keep-alives)
    const colon = line.indexOf(':');
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (name === 'data') {
      this.dataDone += value.length;
      this.dataBytes += utf8Length(value) + 1;
      if (this.dataBytes - 1 > this.maxEventBytes) throw new SseEventTooLarge(this.maxEventBytes);
      this.data.push(value);
    } else if (name === 'event') this.type = value;
    else if (name === 'id') {
      if (!value.includes('\0')) this.lastEventId = value;
    } else if (name === 'retry') {
      if (/^\d+$/.test(value)) this.retryMs = Number(value);
    }
  }
}
