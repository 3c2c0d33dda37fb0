// Code every store type shares: the schema, idempotent store on a request id, retention, the three compaction
// strategies, reading rows back. Subclasses (conversation.ts, key-value.ts, semantic.ts) add their query and
// their per-entry rules.
//
// Tables (one set per database, shared by all stores in it; schema.ts has the layout and why):
//   claw_memory_stores(sid, name)                                             a number per store name
//   claw_memory_entries(seq, sid, id, scope, key, content, metadata, ts)     seq: insertion order; id NULL = seq
//   claw_memory_requests(sid, request_id, fingerprint, ids, ts)               idempotency, survives reopen
//   claw_memory_vectors(seq, sid, vec)                                        semantic: float32 embeddings
//   claw_memory_fts_<hex(store)>                                              semantic: FTS5/FTS4 (rowid = seq)
// Every write passes ids and timestamps as parameters and runs in one db.transaction(), so the sql.js journal
// replays it to the same state.
import { nodeCrypto } from '../../node/lazy.ts';
import { canonicalJson } from '../../protocol/canonical-json.ts';
import { WallAges } from '../../kernel/wall-age.ts';
import { ensureSchema, storeId } from './schema.ts';
import type { Row, SqliteDatabase, SqlValue } from '../sqlite/types.ts';
import {
  MemoryParamsError,
  type ClawMemoryStore,
  type CompactOptions,
  type CompactResult,
  type CompactionStrategy,
  type EntryIn,
  type EntryOut,
  type Query,
  type QueryResult,
  type StoreContext,
  type StoreDeps,
  type StoreKind,
  type StoreSpec,
} from './types.ts';

/** Request ids are remembered this long (runtime profile §5: at least 5 minutes). */
export const REQUEST_TTL_MS = 7 * 24 * 3600 * 1000;
/** Expired request ids are deleted at most this often per store (a scan of the table, journaled like any write). */
export const REQUEST_PRUNE_INTERVAL_MS = 3600 * 1000;
export const DEFAULT_DIGEST_SIZE = 10;
/** Fallback digests keep at most this many characters of each merged entry. */
export const DIGEST_LINE_CHARS = 280;


const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** Manifest duration ("90d", "12h", "30m", "45s") → milliseconds. */
export function parseDuration(d: string): number {
  const m = /^([0-9]+)(s|m|h|d)$/.exec(d);
  if (!m) throw new MemoryParamsError('memory.invalid_duration', `invalid duration '${d}' (e.g. "90d", "12h")`);
  return Number(m[1]) * UNITS[m[2]];
}

/**
 * ISO 8601 as ECMAScript reads it the same on every host: a date, or a date-time with an offset. Date.parse reads a
 * date-time without one, and non-ISO texts ("1", "Jan 1 2026"), in the host's time zone.
 */
const ISO_TIME = /^([+-]\d{6}|\d{4})(-\d\d(-\d\d([T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d))?)?)?$/i;

export function isoTime(t: string, what = 'timestamp'): string {
  const ms = ISO_TIME.test(t) ? Date.parse(t) : NaN;
  if (Number.isNaN(ms)) throw new MemoryParamsError('memory.invalid_time', `${what} '${t}' is not an ISO 8601 time`);
  return new Date(ms).toISOString();
}

export interface Normalised {
  content: string;
  metadata: string | null;
  key: string | null;
  ts: string;
}

export interface EntryRow {
  seq: number;
  id: string;
  scope: string;
  key: string | null;
  content: string;
  metadata: string | null;
  ts: string;
}

export function toOut(r: EntryRow, score?: number): EntryOut {
  const out: EntryOut = { id: r.id, content: r.content, timestamp: r.ts };
  if (score !== undefined) out.score = score;
  if (r.key !== null) out.key = r.key;
  if (r.metadata !== null) out.metadata = JSON.parse(r.metadata) as Record<string, unknown>;
  return out;
}

/** Unix ms (schema 2) → the ISO text the API speaks. */
export const isoOf = (ms: SqlValue): string => new Date(Number(ms)).toISOString();
/** The API's ISO text → Unix ms as stored. */
export const msOf = (iso: string): number => Date.parse(iso);

function asRow(r: Row): EntryRow {
  return {
    seq: Number(r.seq),
    // Derived ids are the seq in decimal (schema.ts); stored ones are older UUIDs, digests, injected ids.
    id: r.id === null ? String(r.seq) : String(r.id),
    scope: String(r.scope),
    key: r.key === null ? null : String(r.key),
    content: String(r.content),
    metadata: r.metadata === null ? null : String(r.metadata),
    ts: isoOf(r.ts),
  };
}

export abstract class BaseStore implements ClawMemoryStore {
  abstract readonly kind: StoreKind;
  readonly name: string;
  protected readonly db: SqliteDatabase;
  protected readonly now: () => string;
  private agesOf: WallAges | undefined;
  /** Injected id generator (tests): ids are then stored. Default: derived from seq, nothing stored. */
  protected readonly newId?: () => string;
  /** This store's number in claw_memory_stores. */
  protected readonly sid: number;
  private lastPrune = -Infinity;
  protected closed = false;

  constructor(
    readonly spec: StoreSpec,
    protected readonly deps: StoreDeps,
  ) {
    this.name = spec.name;
    this.db = deps.db;
    this.now = deps.now ?? (() => new Date().toISOString());
    this.newId = deps.newId;
    ensureSchema(this.db);
    this.sid = storeId(this.db, this.name);
  }

  /**
   * Ages of stored `ts` for retention (src/kernel/wall-age.ts). Made at the first retention check, not in the
   * constructor: it reads the clock, and a store that never expires anything never needs it.
   */
  protected get ages(): WallAges {
    const wall = () => msOf(isoTime(this.now()));
    return (this.agesOf ??= new WallAges({ now: wall, monotonic: this.deps.monotonic ?? wall }));
  }

  // ---- hooks -----------------------------------------------------------------------------------------------

  /** Per-entry validation for this store type (e.g. key-value requires `key`). */
  protected validate(_e: EntryIn, _index: number): void {}
  /** Work that needs `await` before the write transaction (embeddings). Result is passed to `afterInsert`. */
  protected async prepare(_entries: Normalised[]): Promise<unknown> {
    return undefined;
  }
  /** Inside the write transaction, before the row is inserted (key-value: drop the key's previous value). */
  protected beforeInsert(_e: Normalised, _scope: string): void {}
  /** Inside the write transaction, after the row is inserted (semantic: FTS row, vector). */
  protected afterInsert(_seq: number, _e: Normalised, _prepared: unknown, _index: number): void {}
  /** Inside a transaction, before rows go (semantic: FTS rows, vectors). */
  protected onDelete(_seqs: number[]): void {}
  protected abstract runQuery(q: Query, scope: string): Promise<QueryResult>;
  protected supportsSummarize(): boolean {
    return true;
  }

  // ---- store -----------------------------------------------------------------------------------------------

  /** The scope partition for a call: '' unless `spec.scope` is per-identity / per-channel. */
  protected scopeOf(ctx: StoreContext | undefined): string {
    const s = this.spec.scope ?? 'global';
    if (s === 'global') return '';
    if (typeof ctx?.scope !== 'string' || ctx.scope === '')
      throw new MemoryParamsError('memory.scope_required', `store '${this.name}' is ${s}: a scope value is required`);
    return ctx.scope;
  }

  async store(entries: EntryIn[], ctx: StoreContext = {}): Promise<string[]> {
    this.assertOpen();
    if (!Array.isArray(entries)) throw new MemoryParamsError('memory.invalid_entries', 'entries must be an array');
    const scope = this.scopeOf(ctx);
    // One clock reading per call: default timestamps, the request record, retention's max_age cutoff.
    const now = isoTime(this.now());
    const norm = entries.map((e, i) => this.normalise(e, i, now));
    const requestId = ctx.requestId;
    const fingerprint = requestId === undefined ? new Uint8Array(0) : this.fingerprint(entries, scope);
    if (requestId !== undefined) {
      const prior = this.priorRequest(requestId, fingerprint);
      if (prior) return prior;
    }
    const prepared = await this.prepare(norm);
    this.assertOpen();
    return this.db.transaction(() => {
      // Checked again: another call with the same request id may have finished while we awaited.
      if (requestId !== undefined) {
        const prior = this.priorRequest(requestId, fingerprint);
        if (prior) return prior;
      }
      // Two statements, so the journal carries no id column when ids are derived (the common case).
      const ins = this.newId
        ? this.db.prepare('INSERT INTO claw_memory_entries(sid, scope, key, content, metadata, ts, id) VALUES (?, ?, ?, ?, ?, ?, ?)')
        : this.db.prepare('INSERT INTO claw_memory_entries(sid, scope, key, content, metadata, ts) VALUES (?, ?, ?, ?, ?, ?)');
      const ids: string[] = [];
      norm.forEach((e, i) => {
        this.beforeInsert(e, scope);
        const id = this.newId?.();
        const values: SqlValue[] = [this.sid, scope, e.key, e.content, e.metadata, msOf(e.ts)];
        const seq = Number(ins.run(...(id === undefined ? values : [...values, id])).lastInsertRowid);
        this.afterInsert(seq, e, prepared, i);
        ids.push(id ?? String(seq));
      });
      if (requestId !== undefined) {
        const nowMs = msOf(now);
        this.db
          .prepare('INSERT INTO claw_memory_requests(sid, request_id, fingerprint, ids, ts) VALUES (?, ?, ?, ?, ?)')
          .run(this.sid, requestId, fingerprint, JSON.stringify(ids), nowMs);
        if (nowMs - this.lastPrune >= REQUEST_PRUNE_INTERVAL_MS || nowMs < this.lastPrune) {
          this.db.prepare('DELETE FROM claw_memory_requests WHERE sid = ? AND ts < ?').run(this.sid, nowMs - REQUEST_TTL_MS);
          this.lastPrune = nowMs;
        }
      }
      this.enforceRetention(scope, now);
      return ids;
    });
  }

  private normalise(e: EntryIn, i: number, now: string): Normalised {
    if (typeof e !== 'object' || e === null) throw new MemoryParamsError('memory.invalid_entries', `entries[${i}] must be an object`);
    const content =
      typeof e.content === 'string' ? e.content : typeof e.content === 'object' && e.content !== null ? JSON.stringify(e.content) : undefined;
    if (content === undefined) throw new MemoryParamsError('memory.invalid_entries', `entries[${i}].content must be a string or an object`);
    if (e.key !== undefined && typeof e.key !== 'string') throw new MemoryParamsError('memory.invalid_entries', `entries[${i}].key must be a string`);
    if (e.metadata !== undefined && (typeof e.metadata !== 'object' || e.metadata === null || Array.isArray(e.metadata)))
      throw new MemoryParamsError('memory.invalid_entries', `entries[${i}].metadata must be an object`);
    this.validate(e, i);
    return {
      content,
      metadata: e.metadata === undefined ? null : JSON.stringify(e.metadata),
      key: e.key ?? null,
      ts: e.timestamp === undefined ? now : isoTime(e.timestamp, `entries[${i}].timestamp`),
    };
  }

  /**
   * The first 16 bytes of the SHA-256 of the canonical request (sorted keys: a retry whose objects list their keys
   * in another order is the same request; schema 2); rows of schema 1 hold all 32 in hex.
   */
  private fingerprint(entries: EntryIn[], scope: string): Uint8Array {
    return new Uint8Array(nodeCrypto().createHash('sha256').update(canonicalJson([scope, entries])).digest().subarray(0, 16));
  }

  private priorRequest(requestId: string, fingerprint: Uint8Array): string[] | undefined {
    const r = this.db
      .prepare('SELECT fingerprint, ids FROM claw_memory_requests WHERE sid = ? AND request_id = ?')
      .get(this.sid, requestId);
    if (!r) return undefined;
    const stored = r.fingerprint;
    const same =
      typeof stored === 'string'
        ? stored.slice(0, 32) === Buffer.from(fingerprint).toString('hex')
        : stored instanceof Uint8Array && Buffer.from(stored).equals(fingerprint);
    if (!same)
      throw new MemoryParamsError('memory.request_id_conflict', `request_id '${requestId}' was already used with different entries`);
    return JSON.parse(String(r.ids)) as string[];
  }

  /** `retention.max_entries` (oldest by insertion go first) and `retention.max_age`, per scope partition. */
  protected enforceRetention(scope: string, now: string): void {
    const r = this.spec.retention;
    if (r?.max_age !== undefined) {
      // Not `now - max_age`: a turn stored minutes before the wall clock stepped from 1970 to today is minutes old.
      this.deleteSeqs(this.seqs('ts < ?', [this.ages.cutoff(parseDuration(r.max_age))], scope));
    }
    if (r?.max_entries !== undefined) {
      const edge = this.db
        .prepare('SELECT seq FROM claw_memory_entries WHERE sid = ? AND scope = ? ORDER BY seq DESC LIMIT 1 OFFSET ?')
        .get(this.sid, scope, r.max_entries);
      if (edge) this.deleteSeqs(this.seqs('seq <= ?', [Number(edge.seq)], scope));
    }
  }

  // ---- query -----------------------------------------------------------------------------------------------

  async query(q: Query, ctx: StoreContext = {}): Promise<QueryResult> {
    this.assertOpen();
    if (typeof q !== 'object' || q === null || typeof q.type !== 'string')
      throw new MemoryParamsError('memory.invalid_query', 'query.type is required');
    if (q.top_k !== undefined && (!Number.isSafeInteger(q.top_k) || q.top_k < 1))
      throw new MemoryParamsError('memory.invalid_query', 'query.top_k must be a positive integer');
    return this.runQuery(q, this.scopeOf(ctx));
  }

  protected unsupported(q: Query, supported: string): never {
    throw new MemoryParamsError(
      'memory.unsupported_query',
      `query type '${q.type}' is not supported by ${this.kind} store '${this.name}' (supported: ${supported})`,
    );
  }

  // ---- compact ---------------------------------------------------------------------------------------------

  async compact(opts: CompactOptions = {}, ctx: StoreContext = {}): Promise<CompactResult> {
    this.assertOpen();
    const strategy: CompactionStrategy = opts.strategy ?? this.spec.compaction?.strategy ?? 'truncate';
    if (!['truncate', 'sliding-window', 'summarize'].includes(strategy))
      throw new MemoryParamsError('memory.invalid_compaction', `unknown compaction strategy '${String(strategy)}'`);
    if (strategy === 'summarize' && !this.supportsSummarize())
      throw new MemoryParamsError('memory.unsupported_compaction', `${this.kind} store '${this.name}' cannot be summarized`);
    if (opts.keep !== undefined && (!Number.isInteger(opts.keep) || opts.keep < 0))
      throw new MemoryParamsError('memory.invalid_compaction', 'keep must be a non-negative integer');
    const digestSize = opts.digestSize ?? DEFAULT_DIGEST_SIZE;
    if (!Number.isInteger(digestSize) || digestSize < 2)
      throw new MemoryParamsError('memory.invalid_compaction', 'digestSize must be an integer ≥ 2');
    const window = opts.window ?? this.spec.retention?.max_age;
    const windowMs = window === undefined ? undefined : parseDuration(window);
    // No scope value for a scoped store (claw.memory.compact has only `store`): every partition.
    const scopes =
      (this.spec.scope ?? 'global') !== 'global' && ctx.scope === undefined
        ? this.db.prepare('SELECT DISTINCT scope FROM claw_memory_entries WHERE sid = ? ORDER BY scope').all(this.sid).map((r) => String(r.scope))
        : [this.scopeOf(ctx)];
    const before = this.count();
    let used: 'summarizer' | 'fallback' | undefined;
    let summarizerError: string | undefined;
    for (const scope of scopes) {
      const rows = this.rows('1 = 1', [], scope, 'seq');
      const n = rows.length;
      let keep = Math.min(n, opts.keep ?? Math.ceil(n / 2));
      if (strategy === 'sliding-window' && windowMs !== undefined) {
        const newest = Math.max(...rows.map((r) => Date.parse(r.ts)));
        const inWindow = rows.filter((r) => Date.parse(r.ts) > newest - windowMs).length;
        keep = opts.keep === undefined ? inWindow : Math.min(inWindow, opts.keep);
        // The window is by time; rows are by insertion. Drop exactly those outside the window (then the cap).
        const outside = new Set(rows.filter((r) => !(Date.parse(r.ts) > newest - windowMs)).map((r) => r.seq));
        const inside = rows.filter((r) => !outside.has(r.seq));
        const capped = inside.slice(0, Math.max(0, inside.length - keep)).map((r) => r.seq);
        this.db.transaction(() => this.deleteSeqs([...outside, ...capped]));
        continue;
      }
      const old = rows.slice(0, n - keep);
      if (old.length === 0) continue;
      if (strategy !== 'summarize') {
        this.db.transaction(() => this.deleteSeqs(old.map((r) => r.seq)));
        continue;
      }
      const chunks: EntryRow[][] = [];
      for (let i = 0; i < old.length; i += digestSize) chunks.push(old.slice(i, i + digestSize));
      const texts: string[] = [];
      const by: ('summarizer' | 'fallback')[] = [];
      for (const c of chunks) {
        let text: string | undefined;
        // A summarizer that fails (provider down, empty answer) must not fail the compaction: that chunk gets
        // the deterministic digest, and the result says so (docs/memory.md).
        if (this.deps.summarizer && summarizerError === undefined) {
          try {
            text = await this.deps.summarizer(c.map((r) => toOut(r)));
            if (typeof text !== 'string' || text.trim() === '') throw new Error('the summarizer returned no text');
          } catch (e) {
            summarizerError = (e as Error)?.message ?? String(e);
            text = undefined;
          }
        }
        by.push(text === undefined ? 'fallback' : 'summarizer');
        texts.push(text ?? fallbackDigest(c));
        used = used === 'fallback' || text === undefined ? 'fallback' : 'summarizer';
      }
      const digests: Normalised[] = chunks.map((c, i) => ({
        content: texts[i],
        key: null,
        ts: c[c.length - 1].ts,
        metadata: JSON.stringify({
          digest: { count: c.length, ids: c.map((r) => r.id), from: c[0].ts, to: c[c.length - 1].ts, by: by[i] },
        }),
      }));
      const prepared = await this.prepare(digests);
      this.assertOpen();
      this.db.transaction(() => {
        const ins = this.db.prepare(
          'INSERT INTO claw_memory_entries(seq, sid, id, scope, key, content, metadata, ts) VALUES (?, ?, ?, ?, NULL, ?, ?, ?)',
        );
        chunks.forEach((c, i) => {
          // Rows removed meanwhile (retention, another compaction) are not merged twice.
          const live = new Set(this.seqs(`seq IN (${c.map(() => '?').join(',')})`, c.map((r) => r.seq), scope));
          if (live.size === 0) return;
          this.deleteSeqs([...live]);
          // The digest takes the place (seq) of its oldest entry: insertion order is kept.
          // A digest reuses its oldest entry's seq, so its id cannot be derived from it: a UUID is stored.
          ins.run(c[0].seq, this.sid, this.newId?.() ?? nodeCrypto().randomUUID(), scope, digests[i].content, digests[i].metadata, msOf(digests[i].ts));
          this.afterInsert(c[0].seq, digests[i], prepared, i);
        });
      });
    }
    const result: CompactResult = { entries_before: before, entries_after: this.count(), strategy };
    if (strategy === 'summarize') result.summarizer = used ?? (this.deps.summarizer ? 'summarizer' : 'fallback');
    if (summarizerError !== undefined) result.summarizer_error = summarizerError;
    return result;
  }

  // ---- helpers ---------------------------------------------------------------------------------------------

  count(): number {
    return Number(this.db.prepare('SELECT count(*) AS n FROM claw_memory_entries WHERE sid = ?').get(this.sid)!.n);
  }

  protected seqs(where: string, params: SqlValue[], scope: string): number[] {
    return this.db
      .prepare(`SELECT seq FROM claw_memory_entries WHERE sid = ? AND scope = ? AND (${where})`)
      .all(this.sid, scope, ...params)
      .map((r) => Number(r.seq));
  }

  protected rows(where: string, params: SqlValue[], scope: string, order: string, limit?: number): EntryRow[] {
    const lim = limit === undefined ? '' : ` LIMIT ${Math.floor(limit)}`;
    return this.db
      .prepare(
        `SELECT seq, id, scope, key, content, metadata, ts FROM claw_memory_entries WHERE sid = ? AND scope = ? AND (${where}) ORDER BY ${order}${lim}`,
      )
      .all(this.sid, scope, ...params)
      .map(asRow);
  }

  protected rowsBySeq(seqs: number[]): Map<number, EntryRow> {
    const out = new Map<number, EntryRow>();
    const get = this.db.prepare('SELECT seq, id, scope, key, content, metadata, ts FROM claw_memory_entries WHERE seq = ?');
    for (const s of seqs) {
      const r = get.get(s);
      if (r) out.set(s, asRow(r));
    }
    return out;
  }

  protected deleteSeqs(seqs: number[]): void {
    if (seqs.length === 0) return;
    this.db.transaction(() => {
      this.onDelete(seqs);
      const del = this.db.prepare('DELETE FROM claw_memory_entries WHERE seq = ?');
      for (const s of seqs) del.run(s);
    });
  }

  protected assertOpen(): void {
    if (this.closed) throw new MemoryParamsError('memory.closed', `store '${this.name}' is closed`);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.deps.ownsDatabase) this.db.close();
  }
}

/**
 * The deterministic `summarize` fallback (no summarizer injected): the chunk's entries, oldest first, merged
 * into one digest — a header line with the count and time span, then one line per entry, whitespace collapsed
 * and cut at DIGEST_LINE_CHARS characters (with "…").
 */
export function fallbackDigest(chunk: EntryRow[]): string {
  const lines = chunk.map((r) => {
    const text = r.content.replace(/\s+/g, ' ').trim();
    return `- ${text.length > DIGEST_LINE_CHARS ? `${text.slice(0, DIGEST_LINE_CHARS - 1)}…` : text}`;
  });
  return [`[digest of ${chunk.length} entries, ${chunk[0].ts} .. ${chunk[chunk.length - 1].ts}]`, ...lines].join('\n');
}
