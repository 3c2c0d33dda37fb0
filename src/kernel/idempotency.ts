// request_id deduplication (runtime profile §5 "Idempotency Contract"): the same request_id within
// the window returns the first result without re-executing; concurrent duplicates wait for the
// first. A request_id reused for a different call is refused instead of answered with another
// call's result. When the agent has a memory database (issue 4), settled outcomes are also written
// through a DedupStore, so a retry after a restart still gets the first answer.
import { ProtocolError } from '../protocol/errors.ts';
import type { Clock } from './ports.ts';

export const DEFAULT_DEDUP_WINDOW_MS = 5 * 60 * 1000;
const MAX_ENTRIES = 10_000;

interface Entry {
  /** Its key in the Map (the settled queue holds entries, not [id, entry] pairs: one object less per call). */
  id: string;
  /** Computed only when a duplicate arrives (or for persistence): most ids are never repeated. */
  fingerprint: string | (() => string);
  /** The first call's outcome: a promise, or the value / error of a call that completed synchronously. */
  outcome: Outcome<unknown>;
  /** When the outcome settled (the window counts from there); undefined while the call runs. */
  settledAt?: number;
}

type Outcome<T> = { promise: Promise<T> } | { value: T } | { error: unknown };

const fp = (f: string | (() => string)) => (typeof f === 'function' ? f() : f);

/** A settled outcome as persisted: a result, or the protocol error the caller got. */
export interface DedupRecord {
  fingerprint: string;
  outcome: { ok: unknown } | { error: { code: number; message: string; data?: unknown } };
  /** Wall clock (ms since epoch): the persisted window survives restarts, monotonic time does not. */
  settledAt: number;
}

/** Persistence of settled outcomes (synchronous: the memory database's API is). */
export interface DedupStore {
  get(requestId: string): DedupRecord | undefined;
  put(requestId: string, rec: DedupRecord): void;
  /** Forget outcomes settled before `before` (ms since epoch). */
  prune(before: number): void;
}

export class DedupCache {
  private readonly entries = new Map<string, Entry>();
  /** Settled entries in the order they settled (by settledAt), so eviction looks at the head only. */
  private settledQueue: (Entry | undefined)[] = [];
  private head = 0;
  private lastPrune = 0;
  constructor(
    private readonly clock: Clock,
    private readonly windowMs = DEFAULT_DEDUP_WINDOW_MS,
    /** The persistent store when there is one (looked up per call: the memory database opens at STARTING). */
    private readonly persistent: () => DedupStore | undefined = () => undefined,
  ) {}

  /**
   * Run `work` once per request id. Returns `{ reused: true }` with the first outcome for a
   * duplicate, or `{ conflict: true }` when the id was used for a different fingerprint.
   * Failures are remembered too: retrying a denied call with the same id gets the same denial.
   * Work that completes synchronously (value or throw) is answered synchronously: `outcome` is then
   * the value itself, and a remembered synchronous failure is thrown again from run().
   */
  run<T>(
    requestId: string,
    fingerprint: string | (() => string),
    work: () => T | Promise<T>,
  ): { outcome: T | Promise<T>; reused: boolean } | { conflict: true } {
    const now = this.clock.monotonic();
    this.evict(now);
    const hit = this.entries.get(requestId);
    if (hit) {
      if (fp(hit.fingerprint) !== fp(fingerprint)) return { conflict: true };
      return { outcome: unwrap(hit.outcome as Outcome<T>), reused: true };
    }
    const store = this.storeNow();
    const saved = store && this.safe(() => store.get(requestId));
    if (saved && saved.settledAt >= this.clock.now() - this.windowMs) {
      if (saved.fingerprint !== fp(fingerprint)) return { conflict: true };
      const o = saved.outcome;
      const outcome: Outcome<T> = 'ok' in o ? { value: o.ok as T } : { error: new ProtocolError(o.error.code, o.error.message, o.error.data) };
      const restored: Entry = { id: requestId, fingerprint: saved.fingerprint, outcome, settledAt: now };
      this.entries.set(requestId, restored);
      this.settledQueue.push(restored);
      return { outcome: unwrap(outcome), reused: true };
    }
    // No closure, no store record and no second clock read per call unless they are needed: a
    // pipelined burst of synchronous calls spends its time here otherwise (BENCH.md "Round 3").
    const entry: Entry = { id: requestId, fingerprint, outcome: PENDING };
    this.entries.set(requestId, entry);
    if (store && this.clock.now() - this.lastPrune > this.windowMs) {
      this.lastPrune = this.clock.now();
      this.safe(() => store.prune(this.lastPrune - this.windowMs));
    }
    let result: T | Promise<T>;
    try {
      result = work();
    } catch (e) {
      entry.outcome = { error: e };
      this.settle(requestId, entry, store, failureRecord(e), this.clock.monotonic());
      throw e;
    }
    if (result instanceof Promise) {
      entry.outcome = { promise: result };
      // Observed by the caller; this also keeps rejections handled.
      result.then(
        (v) => this.settle(requestId, entry, store, { ok: v === undefined ? null : v }, this.clock.monotonic()),
        (e) => this.settle(requestId, entry, store, failureRecord(e), this.clock.monotonic()),
      );
    } else {
      entry.outcome = { value: result };
      // Settled in the same synchronous run that started it: `now` is its settle time.
      this.settle(requestId, entry, store, store ? { ok: result === undefined ? null : result } : undefined, now);
    }
    return { outcome: result, reused: false };
  }

  /** Only protocol errors are persisted: an internal failure is not an answer worth replaying after a restart. */
  private settle(requestId: string, entry: Entry, store: DedupStore | undefined, o: DedupRecord['outcome'] | undefined, at: number): void {
    entry.settledAt = at;
    this.settledQueue.push(entry);
    if (store && o) this.safe(() => store.put(requestId, { fingerprint: fp(entry.fingerprint), outcome: o, settledAt: this.clock.now() }));
  }

  private storeNow(): DedupStore | undefined {
    try {
      return this.persistent();
    } catch {
      return undefined;
    }
  }

  /** The persistent store is an optimisation of retries: its failure must never fail a call. */
  private safe<R>(f: () => R): R | undefined {
    try {
      return f();
    } catch {
      return undefined;
    }
  }

  /**
   * Drop settled outcomes older than the window (oldest first, in insertion order). A call still
   * running is never dropped: a retry of it must wait for it, however long its approval takes.
   * Over MAX_ENTRIES, the oldest settled ones go first regardless of age.
   */
  private evict(now: number): void {
    // Walks the settled queue, not the Map: iterating a Map from its start also steps over every
    // slot deleted since its last rehash, and over every call still running — per call, that was
    // 15% of a pipelined burst's CPU (BENCH.md "Tool calls").
    const q: (Entry | undefined)[] = this.settledQueue;
    while (this.head < q.length) {
      const e = q[this.head]!;
      if (this.entries.get(e.id) === e) {
        if (now - e.settledAt! < this.windowMs && this.entries.size <= MAX_ENTRIES) break;
        this.entries.delete(e.id);
      }
      q[this.head++] = undefined; // an evicted entry is not kept alive until the next compaction
    }
    if (this.head > 1024 && this.head * 2 > q.length) {
      this.settledQueue = q.slice(this.head);
      this.head = 0;
    }
  }
}

/** The outcome of an entry whose work has not returned yet (shared: replaced before anyone reads it). */
const PENDING: Outcome<unknown> = { value: undefined };

const failureRecord = (e: unknown): DedupRecord['outcome'] | undefined =>
  e instanceof ProtocolError ? { error: { code: e.code, message: e.message, data: e.data } } : undefined;

function unwrap<T>(o: Outcome<T>): T | Promise<T> {
  if ('promise' in o) return o.promise;
  if ('value' in o) return o.value;
  throw o.error;
}
