// Tracks requests being processed so claw.shutdown can drain them (spec §8 STOPPING step 1).
// A request is a token from begin(); only work that outlives the synchronous dispatch is held (a
// Set entry) until end(). A request answered synchronously costs a counter increment: nothing else
// can run — and so no drain can be waiting — between its begin() and its reply.
import { timerDelay } from '../protocol/delay.ts';

interface Waiter {
  before: number;
  resolve(done: boolean): void;
}

export class InflightTracker {
  /** Tokens of held work. A Set iterates in insertion order, so its first entry is the oldest. */
  private readonly pending = new Set<number>();
  private readonly waiters: Waiter[] = [];
  private seq = 0;

  /** A token for work that starts now. Tokens increase in arrival order. */
  begin(): number {
    return ++this.seq;
  }

  /** The work of `token` continues asynchronously: drain() waits for it until end(token). */
  hold(token: number): void {
    this.pending.add(token);
  }

  /** The held work of `token` is finished (answered, failed or abandoned). Idempotent. */
  end(token: number): void {
    if (!this.pending.delete(token) || this.waiters.length === 0) return;
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const w = this.waiters[i]!;
      if (!this.pendingBefore(w.before)) {
        this.waiters.splice(i, 1);
        w.resolve(true);
      }
    }
  }

  /** Register a promise as work: begin() now, end() when it settles (either way). */
  track(p: Promise<unknown>): number {
    const token = this.begin();
    this.hold(token);
    const end = () => this.end(token);
    p.then(end, end);
    return token;
  }

  get size(): number {
    return this.pending.size;
  }

  /**
   * Wait until the work registered before token `before` settles, or `timeoutMs`
   * passes. Work that arrived after a shutdown request is not in flight "at" the shutdown.
   * Resolves true when all of it finished in time.
   */
  drain(timeoutMs: number, before = Infinity): Promise<boolean> {
    if (!this.pendingBefore(before)) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => finish(false), timerDelay(timeoutMs));
      const w: Waiter = { before, resolve: (done) => finish(done) };
      const finish = (done: boolean) => {
        clearTimeout(timer);
        const i = this.waiters.indexOf(w);
        if (i >= 0) this.waiters.splice(i, 1);
        resolve(done);
      };
      this.waiters.push(w);
    });
  }

  /** Is any token lower than `before` unfinished? The oldest pending token is the Set's first. */
  private pendingBefore(before: number): boolean {
    for (const t of this.pending) return t < before;
    return false;
  }
}
