// What `claw chat` shows on a terminal while a turn runs (docs/agent.md "claw chat"): a progress line on
// stderr while the model is thinking, and the answer's text as it streams in when that is safe — native
// mode, where the text is the message itself (JSON modes stream a protocol message that is not valid
// until it is whole, so it is never shown before validation). Never used when piped.
import { withoutThinking } from '../agent/candidate.ts';
import type { DeltaListener } from '../agent/stream.ts';

const FRAMES = ['|', '/', '-', '\\'];

export interface Progress {
  /** Clears the progress line (before anything else is written). */
  stop(): void;
}

/** `| thinking… 3s` on stderr, redrawn in place; nothing for the first 300 ms (fast answers do not flicker). */
export function thinking(write: (s: string) => void, timers: { setInterval: typeof setInterval; clearInterval: typeof clearInterval; now(): number }): Progress {
  const started = timers.now();
  let frame = 0;
  let shown = 0;
  const draw = () => {
    const elapsed = timers.now() - started;
    if (elapsed < 300) return;
    const text = `${FRAMES[frame++ % FRAMES.length]} thinking… ${Math.floor(elapsed / 1000)}s`;
    write(`\r${text}`);
    shown = Math.max(shown, text.length);
  };
  const t = timers.setInterval(draw, 150);
  return {
    stop() {
      timers.clearInterval(t);
      if (shown > 0) write(`\r${' '.repeat(shown)}\r`);
      shown = 0;
    },
  };
}

/**
 * Streams a native answer to the terminal as it arrives. `onDelta` feeds it; `finish(reply)` ends the
 * line and says whether the reply still has to be printed (it was not streamed, or the validated reply
 * differs from what was shown — a retry or a fallback started over).
 */
export class StreamView {
  private text = '';
  private shown = 0;
  private from = '';
  private abandoned = false;
  /**
   * Where the answer's start stands: 0 still blank, 1 inside a leading <think> block, 2 blank after it,
   * 3 shown, 4 hidden (protocol JSON or a fence). Decided once from the start alone, with only the undecided
   * bit kept in `carry`: each delta costs its own length. Re-reading the whole text per delta was quadratic;
   * a reply of 80,000 two-character deltas held the event loop 13 s.
   */
  private phase = 0;
  private carry = '';

  constructor(
    private readonly write: (s: string) => void,
    private readonly clean: (s: string) => string,
    private readonly before: () => void,
  ) {}

  readonly onDelta: DeltaListener = (t, from) => {
    const key = `${from.provider}/${from.request ?? 0}/${from.attempt}`;
    if (key !== this.from) {
      // A fresh answer (retry, fallback, correction): what was shown of the last one is left behind.
      if (this.shown > 0) {
        this.write('\n');
        this.abandoned = true;
      }
      this.from = key;
      this.reset();
    }
    this.text += t;
    if (from.mode !== 'native' || this.phase === 4) return;
    let c = this.phase === 3 ? t : this.carry + t;
    if (this.phase === 0) {
      c = c.trimStart();
      // An open <think> block is not the message; one still arriving ("<thi") is not decided yet.
      if (c.length < 7 && '<think>'.startsWith(c)) return void (this.carry = c);
      this.phase = c.startsWith('<think>') ? ((c = c.slice(7)), 1) : 2;
    }
    if (this.phase === 1) {
      const end = c.indexOf('</think>');
      // Kept: what may be the start of the closing tag.
      if (end < 0) return void (this.carry = c.slice(-7));
      this.phase = 2;
      c = c.slice(end + 8);
    }
    if (this.phase === 2) {
      c = c.trimStart();
      this.carry = '';
      if (c === '') return;
      if (c.startsWith('{') || c.startsWith('`')) return void (this.phase = 4);
      this.phase = 3;
      this.before();
    }
    this.write(this.clean(c));
    this.shown += c.length;
  };

  private reset(): void {
    this.text = '';
    this.shown = 0;
    this.phase = 0;
    this.carry = '';
  }

  /** True when `reply` still has to be printed. */
  finish(reply: string): boolean {
    if (this.shown === 0) return true;
    this.write('\n');
    const same = !this.abandoned && withoutThinking(this.text).trim() === reply;
    this.reset();
    this.from = '';
    this.abandoned = false;
    return !same;
  }
}
