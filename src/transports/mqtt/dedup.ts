// request_id deduplication at the transport (runtime profile §5 "Idempotency Contract", §6.2 "exactly-once via
// request_id deduplication"): QoS 1 is at-least-once, so the broker may deliver a request again (lost PUBACK,
// reconnect) and a sender may retry it. The first delivery runs; a later one with the same request_id is answered
// from the stored reply (or, while the first still runs, gets the reply when it is ready), never executed again.
// Entries expire `windowMs` after their reply (at least 5 minutes, profile §5); at most `maxEntries` are kept.
// `now` is monotonic (the transport passes the host's): measured on the wall clock, an NTP step forward would expire
// entries early and a retried request would run twice. A stored reply read back from disk is preloaded at the
// monotonic time its wall stamp's age stands for (kernel/wall-age.ts).
export const DEFAULT_REPLY_WINDOW_MS = 5 * 60 * 1000;

interface Entry {
  /** Reply texts, once the router answered; undefined while running (or forever, for a notification). */
  replies?: string[];
  waiters: ((replies: string[]) => void)[];
  at: number;
}

export class ReplyCache {
  private readonly entries = new Map<string, Entry>();
  constructor(
    private readonly now: () => number,
    private readonly windowMs = DEFAULT_REPLY_WINDOW_MS,
    private readonly maxEntries = 10_000,
  ) {}

  /**
   * First sight of `key` → 'new' (caller executes, then calls `complete`). Seen before → 'duplicate'; `onReply`
   * gets the stored reply now, or when the first execution completes.
   */
  admit(key: string, onReply: (replies: string[]) => void): 'new' | 'duplicate' {
    this.evict();
    const e = this.entries.get(key);
    if (!e) {
      this.entries.set(key, { waiters: [], at: this.now() });
      return 'new';
    }
    if (e.replies) onReply(e.replies);
    else e.waiters.push(onReply);
    return 'duplicate';
  }

  complete(key: string, replies: string[]): void {
    const e = this.entries.get(key);
    if (!e) return;
    e.replies = replies;
    e.at = this.now();
    const w = e.waiters;
    e.waiters = [];
    for (const fn of w) fn(replies);
  }

  /**
   * A reply that is not the request_id's result (a refusal before any work, protocol/errors.ts isNotExecuted):
   * copies that arrived while it was pending get it too, then the key is forgotten, so a later retry runs.
   */
  release(key: string, replies: string[]): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    for (const fn of e.waiters) fn(replies);
  }

  /** A reply stored before a restart (journal.ts), answered like any other until `at + windowMs`. */
  preload(key: string, replies: string[], at: number): void {
    this.entries.set(key, { replies, waiters: [], at });
  }

  get size(): number {
    return this.entries.size;
  }

  private evict(): void {
    const now = this.now();
    for (const [k, e] of this.entries) {
      // Insertion order ≈ age order; a request still running is kept (its retries must wait for it).
      if (now - e.at < this.windowMs && this.entries.size <= this.maxEntries) break;
      if (e.replies === undefined && this.entries.size <= this.maxEntries && now - e.at < this.windowMs * 12) continue;
      this.entries.delete(k);
    }
  }
}
