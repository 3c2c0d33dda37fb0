// Tracks requests being processed so claw.shutdown can drain them (spec §8 STOPPING step 1).

export class InflightTracker {
  private readonly pending = new Map<number, Promise<unknown>>();
  private seq = 0;

  /** Register work; returns its token. Tokens increase in arrival order. */
  track(p: Promise<unknown>): number {
    const token = ++this.seq;
    const settled = p.then(
      () => undefined,
      () => undefined,
    );
    this.pending.set(token, settled);
    void settled.then(() => this.pending.delete(token));
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
  async drain(timeoutMs: number, before = Infinity): Promise<boolean> {
    const waiting = [...this.pending.entries()].filter(([t]) => t < before).map(([, p]) => p);
    if (waiting.length === 0) return true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), Math.max(0, timeoutMs));
    });
    try {
      return await Promise.race([Promise.all(waiting).then(() => true as const), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
