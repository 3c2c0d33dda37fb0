// request_id deduplication (runtime profile §5 "Idempotency Contract"): the same request_id within
// the window returns the first result without re-executing; concurrent duplicates wait for the
// first. A request_id reused for a different call is refused instead of answered with another
// call's result. When the agent has a memory database (docs/memory.md), settled outcomes are also written
// through a DedupStore, so a retry after a restart still gets the first answer.
import { ProtocolError, isNotExecuted } from '../protocol/errors.ts';
import type { Clock } from './ports.ts';
import { WallAges } from './wall-age.ts';

export const DEFAULT_DEDUP_WINDOW_MS = 5 * 60 * 1000;
const MAX_ENTRIES = 10_000;
const FIRST_CAPACITY = 64;

/** A settled outcome as handed to the store: a result, or the protocol error the caller got. */
export interface DedupRecord {
  /**
   * What identifies the call: its canonical arguments, which may hold a secret (an API key passed to a tool).
   * A store keeps a digest of it, never the text (docs/memory.md "What the database holds").
   */
  fingerprint: string;
  outcome: { ok: unknown } | { error: { code: number; message: string; data?: unknown } };
  /**
   * Wall clock (ms since epoch): the persisted window survives restarts, monotonic time does not. Read back,
   * it is aged by src/kernel/wall-age.ts, so a wall-clock step does not end the window early.
   */
  settledAt: number;
}

/** A persisted outcome as read back: whether it was settled for the same call, not the call itself. */
export interface DedupSaved {
  sameCall: boolean;
  outcome: DedupRecord['outcome'];
  settledAt: number;
}

/** Persistence of settled outcomes (synchronous: the memory database's API is). */
export interface DedupStore {
  /** The outcome kept for `requestId`, compared with the call whose fingerprint is given. */
  get(requestId: string, fingerprint: string): DedupSaved | undefined;
  put(requestId: string, rec: DedupRecord): void;
  /** Forget outcomes settled before `before` (ms since epoch). */
  prune(before: number): void;
}

/** How a settled outcome is kept in the ring. */
const enum Kind {
  Value = 0,
  Error = 1,
  /** The first call answered with a promise: duplicates get that same promise. */
  Promise = 2,
}

interface Running<S> {
  source: S;
  promise: Promise<unknown>;
}

/**
 * `S` is what identifies a call (its "fingerprint source"): kept as it is, and turned into a string
 * by `fingerprintOf` only when a request id repeats or an outcome is persisted — most ids never
 * repeat, and a canonical form of the arguments per call cost 3% of a pipelined burst.
 */
export class DedupCache<S = string | (() => string)> {
  /** Request id → ring slot of its settled outcome. */
  private readonly index = new Map<string, number>();
  /** Calls whose outcome is still a promise: never evicted (a retry must wait for them); usually empty. */
  private readonly running = new Map<string, Running<S>>();
  // The settled outcomes in the order they settled, as a ring of parallel arrays: no object per call
  // is kept for the window, which is what a pipelined burst would pay for in GC.
  private ids: (string | undefined)[] = [];
  private sources: (S | undefined)[] = [];
  private values: unknown[] = [];
  private kinds = new Uint8Array(0);
  private settledAt = new Float64Array(0);
  private head = 0;
  private count = 0;
  /** Monotonic: the store is pruned once per window, the first time a window after start. */
  private lastPrune: number;
  private readonly ages: WallAges;
  /** Monotonic ms at construction: what an earlier process persisted is at least this old. */
  private readonly started: number;

  constructor(
    private readonly clock: Clock,
    private readonly windowMs = DEFAULT_DEDUP_WINDOW_MS,
    /** The persistent store when there is one (looked up per call: the memory database opens at STARTING). */
    private readonly persistent: () => DedupStore | undefined = () => undefined,
    private readonly fingerprintOf: (source: S) => string = plainFingerprint as (source: S) => string,
  ) {
    this.lastPrune = clock.monotonic();
    this.started = this.lastPrune;
    this.ages = new WallAges(clock);
  }

  /**
   * The age of a persisted outcome. A stamp ahead of the wall clock was written before the clock was set back
   * (`date -s`, a bad NTP server); WallAges reads it as fresh, which would replay it, or refuse its reused id
   * as a conflict, for as long as the clock is behind (a year back: a year). Not in the ring, it was settled
   * by an earlier process (or overflowed the ring), so it is at least as old as this process's uptime.
   */
  private savedAge(settledAt: number, wallNow: number): number {
    const age = this.ages.ages()(settledAt);
    return settledAt > wallNow ? Math.max(age, this.clock.monotonic() - this.started) : age;
  }

  /**
   * Run `work` once per request id. Returns `{ reused: true }` with the first outcome for a
   * duplicate, or `{ conflict: true }` when the id was used for a different fingerprint.
   * Failures are remembered too: retrying a denied call with the same id gets the same denial.
   * Work that completes synchronously (value or throw) is answered synchronously: `outcome` is then
   * the value itself, and a remembered synchronous failure is thrown again from run().
   */
  run<T>(requestId: string, source: S, work: () => T | Promise<T>): { outcome: T | Promise<T>; reused: boolean } | { conflict: true } {
    const now = this.clock.monotonic();
    this.evict(now);
    const slot = this.index.get(requestId);
    if (slot !== undefined) {
      if (this.fingerprintOf(this.sources[slot] as S) !== this.fingerprintOf(source)) return { conflict: true };
      return { outcome: this.outcomeAt<T>(slot), reused: true };
    }
    if (this.running.size > 0) {
      const r = this.running.get(requestId);
      if (r) {
        if (this.fingerprintOf(r.source) !== this.fingerprintOf(source)) return { conflict: true };
        return { outcome: r.promise as Promise<T>, reused: true };
      }
    }
    const store = this.storeNow();
    const saved = store && this.safe(() => store.get(requestId, this.fingerprintOf(source)));
    if (saved && this.savedAge(saved.settledAt, this.clock.now()) <= this.windowMs) {
      if (!saved.sameCall) return { conflict: true };
      const o = saved.outcome;
      const ok = 'ok' in o;
      // Same call: this one's source stands for the first one's from now on.
      const s = this.push(requestId, source, ok ? o.ok : new ProtocolError(o.error.code, o.error.message, o.error.data), ok ? Kind.Value : Kind.Error, now);
      return { outcome: this.outcomeAt<T>(s), reused: true };
    }
    if (store && now - this.lastPrune > this.windowMs) {
      this.lastPrune = now;
      this.safe(() => store.prune(this.ages.cutoff(this.windowMs)));
    }
    let result: T | Promise<T>;
    try {
      result = work();
    } catch (e) {
      // Settled in the same synchronous run that started it: `now` is its settle time.
      this.settle(requestId, source, e, Kind.Error, now, store);
      throw e;
    }
    if (result instanceof Promise) {
      this.running.set(requestId, { source, promise: result });
      // Observed by the caller; this also keeps rejections handled.
      result.then(
        (v) => this.settleRunning(requestId, result as Promise<T>, v, Kind.Value),
        (e) => this.settleRunning(requestId, result as Promise<T>, e, Kind.Error),
      );
    } else {
      this.settle(requestId, source, result, Kind.Value, now, store);
    }
    return { outcome: result, reused: false };
  }

  /** A promise settled: duplicates from now on get the same promise, kept for the window from here. */
  private settleRunning(requestId: string, promise: Promise<unknown>, v: unknown, kind: Kind): void {
    const r = this.running.get(requestId);
    if (!r || r.promise !== promise) return;
    this.running.delete(requestId);
    if (kind === Kind.Error && refusedUnrun(v)) return;
    const at = this.clock.monotonic();
    this.evict(at);
    this.push(requestId, r.source, promise, Kind.Promise, at);
    this.persist(requestId, r.source, kind === Kind.Value ? { ok: v === undefined ? null : v } : failureRecord(v), this.storeNow());
  }

  private settle(requestId: string, source: S, v: unknown, kind: Kind, at: number, store: DedupStore | undefined): void {
    // A refusal before any work (invalid arguments, a state refusal) is no result: a retry must run.
    if (kind === Kind.Error && refusedUnrun(v)) return;
    this.push(requestId, source, v, kind, at);
    if (store) this.persist(requestId, source, kind === Kind.Value ? { ok: v === undefined ? null : v } : failureRecord(v), store);
  }

  /** Only protocol errors are persisted: an internal failure is not an answer worth replaying after a restart. */
  private persist(requestId: string, source: S, o: DedupRecord['outcome'] | undefined, store: DedupStore | undefined): void {
    if (store && o) this.safe(() => store.put(requestId, { fingerprint: this.fingerprintOf(source), outcome: o, settledAt: this.clock.now() }));
  }

  private outcomeAt<T>(slot: number): T | Promise<T> {
    const v = this.values[slot];
    if (this.kinds[slot] === Kind.Error) throw v;
    return v as T | Promise<T>;
  }

  /** Appends a settled outcome at the tail of the ring (the oldest goes first when it is full). */
  private push(requestId: string, source: S, v: unknown, kind: Kind, at: number): number {
    if (this.count === this.kinds.length) {
      if (this.count >= MAX_ENTRIES) this.dropHead();
      else this.grow();
    }
    const cap = this.kinds.length;
    const s = (this.head + this.count) % cap;
    this.ids[s] = requestId;
    this.sources[s] = source;
    this.values[s] = v;
    this.kinds[s] = kind;
    this.settledAt[s] = at;
    this.count++;
    this.index.set(requestId, s);
    return s;
  }

  private grow(): void {
    const cap = this.kinds.length;
    const next = Math.min(MAX_ENTRIES, Math.max(FIRST_CAPACITY, cap * 2));
    const order = (a: ArrayLike<unknown>) => Array.from({ length: this.count }, (_, i) => a[(this.head + i) % cap]);
    const ids = order(this.ids) as (string | undefined)[];
    const sources = order(this.sources) as (S | undefined)[];
    const values = order(this.values);
    const kinds = new Uint8Array(next);
    const settledAt = new Float64Array(next);
    for (let i = 0; i < this.count; i++) {
      kinds[i] = this.kinds[(this.head + i) % cap]!;
      settledAt[i] = this.settledAt[(this.head + i) % cap]!;
      this.index.set(ids[i]!, i);
    }
    ids.length = sources.length = values.length = next;
    Object.assign(this, { ids, sources, values, kinds, settledAt, head: 0 });
  }

  private dropHead(): void {
    const h = this.head;
    const id = this.ids[h]!;
    if (this.index.get(id) === h) this.index.delete(id);
    // Not kept alive until the slot is reused.
    this.ids[h] = this.sources[h] = this.values[h] = undefined;
    this.head = (h + 1) % this.kinds.length;
    this.count--;
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
   * Drop settled outcomes older than the window, oldest first. A call still running is never
   * dropped: a retry of it must wait for it, however long its approval takes.
   */
  private evict(now: number): void {
    while (this.count > 0 && now - this.settledAt[this.head]! >= this.windowMs) this.dropHead();
  }
}

/** The default source: a fingerprint string, or a function that makes one. */
const plainFingerprint = (s: string | (() => string)): string => (typeof s === 'function' ? s() : s);

const refusedUnrun = (e: unknown): boolean => e instanceof ProtocolError && isNotExecuted(e.code, e.data);

const failureRecord = (e: unknown): DedupRecord['outcome'] | undefined =>
  e instanceof ProtocolError ? { error: { code: e.code, message: e.message, data: e.data } } : undefined;
