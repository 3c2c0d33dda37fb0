// `rate_limits.tool_calls_per_minute` of a Policy (spec §5.9 schema).
//
// Semantics:
//   - One sliding 60 s window per policy name: a call at time `now` (ms) is allowed when fewer
//     than `limit` calls were ALLOWED in the window (now − 60000, now]. A call recorded at t
//     therefore stops counting at exactly t + 60000 (that call may proceed).
//   - Only allowed calls are recorded; refused ones never extend the window.
//   - `limit` 0 allows no call at all. A non-integer limit is floored; negative counts as 0.
//   - Time is passed in (`now`, a monotonic millisecond clock); nothing here reads a clock. A
//     `now` earlier than recorded calls (a clock stepping back) keeps those calls counted until
//     the clock passes them again: never more than `limit` in any window.
//   - Bounded memory: only allowed calls are kept, so at most `limit` live timestamps per policy
//     (the largest limit used, if it changed), expired ones pruned as calls come in; one entry per
//     policy name — names come from the manifest, not the wire.
//     forget() drops a policy's entry (e.g. on manifest reload).
export const WINDOW_MS = 60_000;

interface Window {
  /** Allowed-call timestamps in call order; entries before `head` are already expired. */
  times: number[];
  head: number;
}

export class RateLimiter {
  private readonly windows = new Map<string, Window>();

  tryAcquire(policy: string, limit: number, now: number): boolean {
    const max = Number.isFinite(limit) && limit > 0 ? Math.floor(limit) : 0;
    let w = this.windows.get(policy);
    if (!w) {
      if (max === 0) return false;
      w = { times: [], head: 0 };
      this.windows.set(policy, w);
    }
    const cutoff = now - WINDOW_MS;
    // Timestamps are appended in call order; with a monotonic clock they are sorted, so expired
    // ones are a prefix. (If the clock stepped back, the prefix scan stops early: safe, since it
    // can only keep calls counted longer.)
    while (w.head < w.times.length && w.times[w.head] <= cutoff) w.head++;
    // Drop the expired prefix once it is worth copying: memory stays within the largest limit
    // used for this policy (live entries) plus an expired prefix no longer than the live part.
    if (w.head > 0 && (w.head >= 1024 || w.head * 2 >= w.times.length)) {
      w.times = w.times.slice(w.head);
      w.head = 0;
    }
    const live = w.times.length - w.head;
    if (live >= max) return false;
    w.times.push(now);
    return true;
  }

  /** Calls currently counted in the window for `policy` (without recording anything). */
  count(policy: string, now: number): number {
    const w = this.windows.get(policy);
    if (!w) return 0;
    const cutoff = now - WINDOW_MS;
    let n = 0;
    for (let i = w.head; i < w.times.length; i++) if (w.times[i] > cutoff) n++;
    return n;
  }

  forget(policy: string): void {
    this.windows.delete(policy);
  }

  /** Number of policies with state (for tests and bounded-memory checks). */
  get size(): number {
    return this.windows.size;
  }
}
