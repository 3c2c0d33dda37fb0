// Lines from a byte stream, pulled one at a time, in order. `claw chat` reads messages and approval answers
// from the same input: whichever asks first gets the next unread line, so a piped script can put the
// answer to an approval right after the message that causes it.
import type { ByteSource } from '../transports/stdio.ts';

export class LineInput {
  private readonly lines: string[] = [];
  private waiters: ((line: string | undefined) => void)[] = [];
  private tail = '';
  private ended = false;
  private readonly decoder = new TextDecoder();

  constructor(src: ByteSource) {
    src.on('data', (chunk) => {
      this.tail += typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = this.tail.indexOf('\n')) >= 0) {
        this.push(this.tail.slice(0, nl).replace(/\r$/, ''));
        this.tail = this.tail.slice(nl + 1);
      }
    });
    const end = () => {
      if (this.ended) return;
      if (this.tail !== '') this.push(this.tail);
      this.tail = '';
      this.ended = true;
      for (const w of this.waiters.splice(0)) w(undefined);
    };
    src.on('end', end);
    src.on('close', end);
    src.on('error', end);
  }

  /**
   * The next line, or undefined at the end of input — or when `signal` aborts first: the request is then
   * withdrawn, so the line that arrives later goes to the next caller (an approval question that expired
   * must not swallow the user's next message).
   */
  next(signal?: AbortSignal): Promise<string | undefined> {
    if (this.lines.length > 0) return Promise.resolve(this.lines.shift());
    if (this.ended || signal?.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const waiter = (line: string | undefined) => {
        signal?.removeEventListener('abort', withdraw);
        resolve(line);
      };
      const withdraw = () => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(undefined);
      };
      signal?.addEventListener('abort', withdraw, { once: true });
      this.waiters.push(waiter);
    });
  }

  private push(line: string): void {
    const w = this.waiters.shift();
    if (w) w(line);
    else this.lines.push(line);
  }
}
