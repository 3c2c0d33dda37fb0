// `processing.rate_limit` of a Channel (spec §5.3): per channel user, a token bucket.
//
// Semantics (docs/channels.md "Rate limit"):
//   - capacity = `burst` (default: messages_per_minute), refilled continuously at messages_per_minute
//     per 60 000 ms; a message takes one token. A user who waited long enough may send `burst` messages
//     at once, and then one every 60000 / messages_per_minute ms.
//   - without `messages_per_minute` there is no sustained rate to enforce: no limit (burst alone is
//     meaningless).
//   - refused messages take nothing (a spammer does not extend their own wait beyond the refill time).
//   - time is injected (a monotonic ms clock); nothing here reads a clock.
//   - bounded memory: user ids come from the wire, so at most `maxUsers` buckets are kept; a full
//     bucket is the same as no bucket and is dropped first, then the least recently used.
export interface RateLimitSpec {
  messages_per_minute?: number;
  burst?: number;
}

interface Bucket {
  /** Credit in token·60000 units: integers only, so refill and retry times are exact (no float drift). */
  units: number;
  at: number;
}

export type RateDecision = { ok: true } | { ok: false; retryAfterMs: number };

/** One token, in units: a message costs 60 000; the bucket gains messages_per_minute units per ms. */
const TOKEN = 60_000;

export class ChannelRateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly perMs: number;
  private readonly capacity: number;

  constructor(
    spec: RateLimitSpec | undefined,
    private readonly maxUsers = 10_000,
  ) {
    const mpm = spec?.messages_per_minute ?? 0;
    this.perMs = mpm;
    this.capacity = (spec?.burst ?? mpm) * TOKEN;
  }

  get enabled(): boolean {
    return this.perMs > 0;
  }

  take(user: string, now: number): RateDecision {
    if (!this.enabled) return { ok: true };
    const t = Math.floor(now);
    const b = this.buckets.get(user);
    let units = this.capacity;
    if (b) {
      // A clock stepping back never adds credit.
      units = Math.min(this.capacity, b.units + Math.max(0, t - b.at) * this.perMs);
      this.buckets.delete(user); // re-inserted below: Map order = least recently used first
    }
    const at = Math.max(t, b?.at ?? t);
    if (units < TOKEN) {
      this.buckets.set(user, { units, at });
      return { ok: false, retryAfterMs: Math.ceil((TOKEN - units) / this.perMs) };
    }
    this.buckets.set(user, { units: units - TOKEN, at });
    this.evict(t);
    return { ok: true };
  }

  get size(): number {
    return this.buckets.size;
  }

  private evict(now: number): void {
    if (this.buckets.size <= this.maxUsers) return;
    for (const [k, b] of this.buckets) {
      if (b.units + (now - b.at) * this.perMs >= this.capacity) this.buckets.delete(k);
      if (this.buckets.size <= this.maxUsers) return;
    }
    // All buckets still refilling: forget the least recently used (it gets a full bucket back; bounded
    // memory matters more than one user's exactness under a flood of distinct ids).
    for (const k of this.buckets.keys()) {
      if (this.buckets.size <= this.maxUsers) return;
      this.buckets.delete(k);
    }
  }
}
