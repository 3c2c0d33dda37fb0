// request_id deduplication (runtime profile §5 "Idempotency Contract"): the same request_id within
// the window returns the first result without re-executing; concurrent duplicates wait for the
// first. A request_id reused for a different call is refused instead of answered with another
// call's result. Persistence moves to the memory store when one exists (later capability).
import type { Clock } from './ports.ts';

export const DEFAULT_DEDUP_WINDOW_MS = 5 * 60 * 1000;
const MAX_ENTRIES = 10_000;

interface Entry {
  fingerprint: string;
  outcome: Promise<unknown>;
  /** When the outcome settled (the window counts from there); undefined while the call runs. */
  settledAt?: number;
}

export class DedupCache {
  private readonly entries = new Map<string, Entry>();
  constructor(
    private readonly clock: Clock,
    private readonly windowMs = DEFAULT_DEDUP_WINDOW_MS,
  ) {}

  /**
   * Run `work` once per request id. Returns `{ reused: true }` with the first outcome for a
   * duplicate, or `{ conflict: true }` when the id was used for a different fingerprint.
   * Failures are remembered too: retrying a denied call with the same id gets the same denial.
   */
  run<T>(requestId: string, fingerprint: string, work: () => Promise<T>): { outcome: Promise<T>; reused: boolean } | { conflict: true } {
    const now = this.clock.monotonic();
    this.evict(now);
    const hit = this.entries.get(requestId);
    if (hit) {
      if (hit.fingerprint !== fingerprint) return { conflict: true };
      return { outcome: hit.outcome as Promise<T>, reused: true };
    }
    const outcome = work();
    const entry: Entry = { fingerprint, outcome };
    const settle = () => {
      entry.settledAt = this.clock.monotonic();
    };
    outcome.then(settle, settle); // observed by the caller; this also keeps rejections handled
    this.entries.set(requestId, entry);
    return { outcome, reused: false };
  }

  /**
   * Drop settled outcomes older than the window (oldest first, in insertion order). A call still
   * running is never dropped: a retry of it must wait for it, however long its approval takes.
   * Over MAX_ENTRIES, the oldest settled ones go first regardless of age.
   */
  private evict(now: number): void {
    for (const [id, e] of this.entries) {
      if (e.settledAt === undefined) continue;
      if (now - e.settledAt < this.windowMs && this.entries.size <= MAX_ENTRIES) break;
      this.entries.delete(id);
    }
  }
}
