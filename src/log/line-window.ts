/**
 * A per-window line budget for logs whose volume someone else controls (a server's stderr, what a
 * server's messages cause us to log): at most `limit` lines in each window of `windowMs`, the rest
 * counted, so a chatty or hostile peer cannot fill the disk nor hold the event loop on a full log pipe.
 *
 * Windows are measured on the monotonic clock: on the wall clock, a backward step (NTP on a board that
 * booted without an RTC) would keep the current window open until the clock caught up, and every line
 * in between would be refused.
 */
export class LineWindow {
  private start = -Infinity;
  private inWindow = 0;
  private refused = 0;

  constructor(
    readonly limit: number,
    readonly windowMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * Counts one line and says whether it may be logged. `onNewWindow` runs first when this line opens a
   * new window, so a caller can report what the last one refused.
   */
  admit(onNewWindow?: () => void): boolean {
    const t = this.now();
    // `t < start` only with an injected clock that steps back: open a window rather than wait for it.
    if (t - this.start >= this.windowMs || t < this.start) {
      onNewWindow?.();
      this.start = t;
      this.inWindow = 0;
    }
    if (this.inWindow++ < this.limit) return true;
    this.refused++;
    return false;
  }

  /** True for the first line refused in the current window: the moment to say that lines are being dropped. */
  get firstRefusedInWindow(): boolean {
    return this.inWindow === this.limit + 1;
  }

  /** Lines refused since the last call; resets the count. */
  takeRefused(): number {
    const n = this.refused;
    this.refused = 0;
    return n;
  }
}
