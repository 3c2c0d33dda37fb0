// Server-sent events for agent notifications (claw.heartbeat, claw.tool.approval_requested…), the way MCP's
// Streamable HTTP does it: GET on the CKP path opens a `text/event-stream`; every event has an id, and a client
// that reconnects with `Last-Event-ID` gets what it missed while the bounded buffer still holds it.
// Ids are `{epoch}-{seq}`: seq counts up by one per event (a gap in what a client saw is visible), epoch names
// this listener's life, so an id from an earlier process is recognised and the whole buffer is replayed.
import type { ServerResponse } from 'node:http';

export interface SseEvent {
  seq: number;
  /** The whole event as written on the wire (`id:` and `data:` lines and the blank line). */
  wire: string;
}

export class EventBuffer {
  private readonly events: SseEvent[] = [];
  private seq = 0;
  constructor(
    private readonly capacity: number,
    readonly epoch: string,
  ) {}

  push(message: unknown): SseEvent {
    const seq = ++this.seq;
    // JSON.stringify never emits a raw newline, so one data line holds the whole message.
    const e = { seq, wire: `id: ${this.epoch}-${seq}\ndata: ${JSON.stringify(message)}\n\n` };
    this.events.push(e);
    if (this.events.length > this.capacity) this.events.shift();
    return e;
  }

  /** Events after `lastEventId` still held; every held event for an id of another epoch or none parseable. */
  since(lastEventId: string | undefined): SseEvent[] {
    if (lastEventId === undefined) return [];
    const m = /^([a-z0-9]+)-(\d+)$/.exec(lastEventId.trim());
    if (!m || m[1] !== this.epoch) return this.events.slice();
    const after = Number(m[2]);
    return this.events.filter((e) => e.seq > after);
  }
}

/** One open stream. Slow readers are dropped (they resume with Last-Event-ID) rather than buffered without end. */
export class SseStream {
  private timer: ReturnType<typeof setInterval> | undefined;
  private ended = false;
  constructor(
    private readonly res: ServerResponse,
    private readonly opts: { keepaliveMs: number; maxBufferedBytes: number; onEnd: (s: SseStream) => void },
  ) {
    res.on('close', () => this.finish());
  }

  open(backlog: readonly SseEvent[]): void {
    this.res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
    });
    // The socket stays open for as long as the stream does: no idle cut-off (keep-alive comments below).
    this.res.socket?.setTimeout(0);
    // `retry:` tells EventSource how soon to reconnect; then what the client missed, if anything.
    this.res.write(`retry: 2000\n\n${backlog.map((e) => e.wire).join('')}`);
    this.timer = setInterval(() => this.write(': keep-alive\n\n'), this.opts.keepaliveMs);
    this.timer.unref?.();
  }

  send(e: SseEvent): void {
    this.write(e.wire);
  }

  end(): void {
    if (this.ended) return;
    this.res.end();
    this.finish();
  }

  private write(text: string): void {
    if (this.ended) return;
    if (this.res.writableLength > this.opts.maxBufferedBytes) {
      // A reader this far behind is not reading: cut it off; it can resume where it was.
      this.res.destroy();
      this.finish();
      return;
    }
    this.res.write(text);
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.timer) clearInterval(this.timer);
    this.opts.onEnd(this);
  }
}
