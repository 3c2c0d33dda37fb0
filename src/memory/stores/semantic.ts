// `semantic` store: full-text ranked search, hybrid with vectors when an embedder is injected.
//   - full text: FTS5 + bm25() (node:sqlite, Bun), FTS4 + matchinfo('pcnalx') with the same BM25 in JS
//     (sql.js), or BM25 over JS tokens when the SQLite has no FTS. Scores: ranking.ts.
//   - embedder injected and `search.strategy` 'hybrid' (the default): full-text and cosine rankings fused
//     (`search.fusion` 'reciprocal-rank', the default, or 'linear-combination': mean of the two [0,1] scores).
//     'vector-only': cosine alone. 'fts-only', or no embedder: full text alone.
//   The result's `search` says which ran ('fts' | 'hybrid' | 'vector'), `fts` which engine.
// Entries stored while no embedder answered have no vector; they still rank through full text, and get one in the
// background once the embedder answers again (backfill).
import { ClawError } from '../../protocol/errors.ts';
import { BaseStore, toOut, type EntryRow, type Normalised } from './base.ts';
import {
  blobToVector,
  bm25Js,
  cosine,
  docsizeColumn0,
  matchExpression,
  matchinfoScorer,
  normaliseBm25,
  reciprocalRankFusion,
  topK,
  vectorToBlob,
} from './ranking.ts';
import { MemoryParamsError, type Query, type QueryResult, type StoreDeps, type StoreSpec } from './types.ts';
import type { Row } from '../sqlite/types.ts';

export const DEFAULT_TOP_K = 10;
/** Hybrid: candidates taken from each ranking before fusion. */
export const HYBRID_CANDIDATES = 50;
/** FTS4 `automerge`: merge as soon as a level holds this many segments (2, the fewest FTS4 allows). */
export const FTS4_AUTOMERGE = 2;
/** Entries embedded per request when vectors missing from earlier writes are filled in (backfill). */
export const BACKFILL_BATCH = 32;

interface Ranked {
  seq: number;
  /** Normalised [0, 1] score of this ranking. */
  score: number;
}

const byScore = (a: Ranked, b: Ranked) => b.score - a.score || a.seq - b.seq;

export class SemanticStore extends BaseStore {
  readonly kind = 'semantic' as const;
  readonly ftsEngine: 'fts5' | 'fts4' | 'js';
  private readonly fts: string;

  constructor(spec: StoreSpec, deps: StoreDeps) {
    super(spec, deps);
    const cap = this.db.capabilities.fts;
    this.ftsEngine = cap === 'none' ? 'js' : cap;
    this.fts = `claw_memory_fts_${Buffer.from(this.name, 'utf8').toString('hex')}`;
    // Only what is missing is created: on sql.js every DDL statement is a journal record replayed at every open.
    const fts = this.fts;
    const has = new Set(
      this.db
        .prepare('SELECT name FROM sqlite_master WHERE name IN (?, ?, ?, ?)')
        .all(fts, `${fts}_ai`, `${fts}_ad`, `${fts}_bd`)
        .map((r) => String(r.name)),
    );
    if (cap === 'fts5' && !has.has(fts)) this.db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS ${fts} USING fts5(content, tokenize='unicode61')`);
    // FTS4 index over external content: the text stays in claw_memory_entries only, not a second copy in the
    // index's own %_content table — 20% less database image per entry (512 → 408 B in the bench corpus), so
    // smaller and rarer sql.js snapshots and less WASM memory. Same index, same matchinfo,
    // same scores. A table created before this change keeps its internal content (IF NOT EXISTS) and its triggers.
    else if (cap === 'fts4') {
      if (!has.has(fts)) this.db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS ${fts} USING fts4(content, content="claw_memory_entries", tokenize=unicode61)`);
      this.keepSegmentsMerged();
    }
    if (cap !== 'none') {
      // The index follows the entries by triggers, not by statements of ours: the sql.js journal then records one
      // INSERT per entry instead of two copies of its content (bytes written per entry).
      // The store's number, not its name: the trigger tests it on every insert and delete (schema.ts).
      const lit = String(this.sid);
      const ai = `CREATE TRIGGER IF NOT EXISTS ${fts}_ai AFTER INSERT ON claw_memory_entries WHEN new.sid = ${lit} BEGIN INSERT INTO ${fts}(rowid, content) VALUES (new.seq, new.content); END;`;
      if (cap === 'fts4' && this.externalContent()) {
        // External content: FTS4 reads the row's text to remove its tokens, so the index row goes BEFORE the entry.
        // (An `_ad` trigger from a downgrade-and-upgrade would delete twice and skew the index's row count: dropped.)
        if (!has.has(`${fts}_ai`) || !has.has(`${fts}_bd`) || has.has(`${fts}_ad`)) {
          this.db.exec(
            `${ai}
           DROP TRIGGER IF EXISTS ${fts}_ad;
           CREATE TRIGGER IF NOT EXISTS ${fts}_bd BEFORE DELETE ON claw_memory_entries WHEN old.sid = ${lit} BEGIN DELETE FROM ${fts} WHERE docid = old.seq; END;`,
          );
        }
      } else if (!has.has(`${fts}_ai`) || !has.has(`${fts}_ad`)) {
        this.db.exec(
          `${ai}
           CREATE TRIGGER IF NOT EXISTS ${fts}_ad AFTER DELETE ON claw_memory_entries WHEN old.sid = ${lit} BEGIN DELETE FROM ${fts} WHERE rowid = old.seq; END;`,
        );
      }
    }
  }

  /**
   * FTS4 writes each transaction's terms as a new index segment and, by default, merges a level only once it holds
   * 16 segments; a MATCH looks every term up in every segment. At 100k entries stored 1,000 per call that was 40
   * segments, and the lookups alone took 0.39 ms of a 0.75 ms query (the goal: ≤ 1 ms p50). With FTS4's
   * `automerge=2` each write also does a bounded share of incremental merging (SQLite FTS3/4 docs, "automerge"):
   * 3–5 segments at 100k, lookups 0.05 ms, and no slower filling. The setting lives in the
   * index's own %_stat table (row 2), so it is written once — by a new store, or an older one on first open — and
   * not journaled again on every open.
   */
  private keepSegmentsMerged(): void {
    let current: unknown;
    try {
      current = this.db.prepare(`SELECT value FROM ${this.fts}_stat WHERE id = 2`).get()?.value;
    } catch {
      current = undefined; // no %_stat table (an FTS3-style index): the command creates it
    }
    if (Number(current) !== FTS4_AUTOMERGE) this.db.exec(`INSERT INTO ${this.fts}(${this.fts}) VALUES('automerge=${FTS4_AUTOMERGE}')`);
  }

  /** Whether this store's FTS table indexes claw_memory_entries as external content (created by this version). */
  private externalContent(): boolean {
    const row = this.db.prepare(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?`).get(this.fts);
    return typeof row?.sql === 'string' && /\bcontent\s*=\s*"claw_memory_entries"/i.test(row.sql);
  }

  private get useVectors(): boolean {
    return this.deps.embedder !== undefined && this.spec.search?.strategy !== 'fts-only';
  }

  protected override async prepare(entries: Normalised[]): Promise<unknown> {
    if (!this.useVectors || entries.length === 0) return undefined;
    // An embedder that does not answer must not lose a write: the entries are stored without vectors and
    // still rank through full text (the embedder reports its failure; docs/memory.md "Embeddings").
    try {
      const vs = await this.embed(entries.map((e) => e.content));
      this.backfillSoon();
      return vs;
    } catch {
      this.allHaveVectors = false;
      return undefined;
    }
  }

  /** True once a backfill found no entry without a vector; false again when a store could not embed. */
  private allHaveVectors = false;
  private backfilling = false;
  /** After a failed backfill batch (one entry the provider always refuses, say): not before this (ms, monotonic). */
  private backfillAfter = 0;
  private backfillFailures = 0;
  private readonly monotonic = this.deps.monotonic ?? (() => performance.now());

  /**
   * Entries stored while the embedder did not answer (or before this store had one) get their vectors once it
   * answers again: after each successful embedding (a store or a query), one batch of the oldest such entries is
   * embedded in the background — paced by use, so a large backlog never floods the provider or its token quota.
   * The write is an ordinary journalled transaction.
   */
  private backfillSoon(): void {
    if (this.allHaveVectors || this.backfilling || this.monotonic() < this.backfillAfter) return;
    this.backfilling = true;
    void this.backfill().finally(() => (this.backfilling = false));
  }

  private async backfill(): Promise<void> {
    try {
      const rows = this.db
        .prepare(
          `SELECT e.seq AS seq, e.content AS content FROM claw_memory_entries e LEFT JOIN claw_memory_vectors v ON v.seq = e.seq
           WHERE e.sid = ? AND v.seq IS NULL ORDER BY e.seq LIMIT ?`,
        )
        .all(this.sid, BACKFILL_BATCH);
      if (rows.length === 0) {
        this.allHaveVectors = true;
        return;
      }
      const vs = await this.embed(rows.map((r) => String(r.content)));
      if (this.closed) return;
      const put = this.db.prepare(
        'INSERT OR IGNORE INTO claw_memory_vectors(seq, sid, vec) SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM claw_memory_entries WHERE seq = ?)',
      );
      this.db.transaction(() => rows.forEach((r, i) => put.run(r.seq, this.sid, vectorToBlob(vs[i]), r.seq)));
      if (rows.length < BACKFILL_BATCH) this.allHaveVectors = true;
      this.backfillFailures = 0;
    } catch {
      // The embedder failed on this batch (or the store closed): retried after a growing pause (1 min, doubling, at
      // most 1 h), so a batch the provider always refuses does not add a failing request to every memory call.
      this.backfillFailures++;
      this.backfillAfter = this.monotonic() + Math.min(60_000 * 2 ** (this.backfillFailures - 1), 3_600_000);
    }
  }

  private async embed(texts: string[]): Promise<number[][]> {
    const vs = await this.deps.embedder!(texts);
    if (!Array.isArray(vs) || vs.length !== texts.length || !vs.every((v) => Array.isArray(v) && v.length > 0))
      throw new ClawError('memory.embedder', `embedder returned ${Array.isArray(vs) ? vs.length : 'no'} vectors for ${texts.length} texts`);
    return vs;
  }

  protected override afterInsert(seq: number, _e: Normalised, prepared: unknown, index: number): void {
    const vectors = prepared as number[][] | undefined;
    if (vectors)
      this.db
        .prepare('INSERT OR REPLACE INTO claw_memory_vectors(seq, sid, vec) VALUES (?, ?, ?)')
        .run(seq, this.sid, vectorToBlob(vectors[index]));
  }

  protected override onDelete(seqs: number[]): void {
    // FTS rows go by trigger (see the constructor).
    const delVec = this.db.prepare('DELETE FROM claw_memory_vectors WHERE seq = ?');
    for (const s of seqs) {
      delVec.run(s);
      this.lengths?.delete(s);
    }
  }

  protected async runQuery(q: Query, scope: string): Promise<QueryResult> {
    if (q.type !== 'semantic') this.unsupported(q, 'semantic');
    if (typeof q.text !== 'string' || q.text.trim() === '')
      throw new MemoryParamsError('memory.invalid_query', 'query.text is required for a semantic query');
    const topK = q.top_k ?? this.spec.search?.top_k ?? DEFAULT_TOP_K;
    const strategy = this.spec.search?.strategy ?? 'hybrid';
    let ranked: Ranked[];
    let search: QueryResult['search'];
    if (!this.useVectors) {
      ranked = this.textRank(q.text, scope, topK);
      search = 'fts';
    } else {
      let qv: number[];
      try {
        [qv] = await this.embed([q.text]);
        this.backfillSoon();
      } catch (e) {
        // Issue 4: the embedding provider did not answer → full text alone, and the result says why.
        this.assertOpen();
        const entries = this.entriesOf(this.textRank(q.text, scope, topK), scope);
        return { entries, search: 'fts', fts: this.ftsEngine, fallback: (e as Error)?.message ?? String(e) };
      }
      this.assertOpen();
      const limit = Math.max(topK, HYBRID_CANDIDATES);
      const vec = this.vectorRank(qv, scope, strategy === 'vector-only' ? topK : limit);
      if (strategy === 'vector-only') {
        ranked = vec;
        search = 'vector';
      } else {
        const text = this.textRank(q.text, scope, limit);
        search = 'hybrid';
        if (this.spec.search?.fusion === 'linear-combination') {
          const acc = new Map<number, number>();
          for (const r of [...text, ...vec]) acc.set(r.seq, (acc.get(r.seq) ?? 0) + r.score / 2);
          ranked = [...acc].map(([seq, score]) => ({ seq, score })).sort(byScore);
        } else {
          ranked = reciprocalRankFusion([text.map((r) => r.seq), vec.map((r) => r.seq)]).map(({ id, score }) => ({ seq: id, score }));
        }
        ranked = ranked.slice(0, topK);
      }
    }
    return { entries: this.entriesOf(ranked, scope), search, fts: this.ftsEngine };
  }

  private entriesOf(ranked: Ranked[], scope: string) {
    // One statement for all result rows rather than one per hit: half the 0.1 ms that 10 lookups took at 100k
    // entries on sql.js. The seqs come from this store and scope already.
    const rows = new Map<number, EntryRow>();
    if (ranked.length > 0)
      for (const row of this.rows('seq IN (SELECT value FROM json_each(?))', [JSON.stringify(ranked.map((r) => r.seq))], scope, 'seq'))
        rows.set(row.seq, row);
    return ranked.flatMap((r) => {
      const row = rows.get(r.seq);
      return row ? [toOut(row, r.score)] : [];
    });
  }

  /** Full-text ranking, best first, ties by insertion order. */
  private textRank(text: string, scope: string, limit: number): Ranked[] {
    const expr = matchExpression(text);
    if (expr === undefined) return [];
    // The index holds this store's rows only: an unscoped store needs no per-match join to filter by partition.
    const scoped = (this.spec.scope ?? 'global') !== 'global';
    if (this.ftsEngine === 'fts5') {
      return this.db
        .prepare(
          scoped
            ? `SELECT ${this.fts}.rowid AS seq, -bm25(${this.fts}) AS x FROM ${this.fts} JOIN claw_memory_entries e ON e.seq = ${this.fts}.rowid
               WHERE ${this.fts} MATCH ? AND e.scope = ? ORDER BY x DESC, seq ASC LIMIT ?`
            : `SELECT rowid AS seq, -bm25(${this.fts}) AS x FROM ${this.fts} WHERE ${this.fts} MATCH ? ORDER BY x DESC, seq ASC LIMIT ?`,
        )
        .all(...(scoped ? [expr, scope, limit] : [expr, limit]))
        .map((r) => ({ seq: Number(r.seq), score: normaliseBm25(Number(r.x)) }));
    }
    let all: Ranked[];
    if (this.ftsEngine === 'fts4') {
      // FTS4 cannot rank in SQL: every match comes back and is ranked here, so the per-row work matters: idf
      // once per query (matchinfoScorer), document lengths from our copy of %_docsize (docLengths), and a
      // top-k selection instead of sorting every hit.
      // The matches are scored as SQLite steps through them and only the best `limit` are kept: holding every hit
      // (thousands of rows with a blob each at 10k entries) until the end made them survive V8's young-generation
      // collections, and V8 answers that by doubling the young generation — +20–30 MB of peak RSS after 50
      // queries.
      const score = matchinfoScorer();
      const lengths = this.docLengths();
      const len = [0];
      const unknown: { seq: number; mi: Uint8Array }[] = [];
      const scored = (seq: number, mi: Uint8Array): Ranked => {
        len[0] = lengths.get(seq) ?? 0;
        return { seq, score: normaliseBm25(score(mi, len)) };
      };
      const best = topK(
        (function* (rows: Iterable<Row>) {
          for (const r of rows) {
            const seq = Number(r.seq);
            // Written since the lengths were read: looked up together once the scan is done.
            if (lengths.has(seq)) yield scored(seq, r.mi as Uint8Array);
            else unknown.push({ seq, mi: r.mi as Uint8Array });
          }
        })(
          this.db
            .prepare(
              scoped
                ? `SELECT ${this.fts}.rowid AS seq, matchinfo(${this.fts}, 'pcnax') AS mi FROM ${this.fts} JOIN claw_memory_entries e ON e.seq = ${this.fts}.rowid
               WHERE ${this.fts} MATCH ? AND e.scope = ?`
                : `SELECT rowid AS seq, matchinfo(${this.fts}, 'pcnax') AS mi FROM ${this.fts} WHERE ${this.fts} MATCH ?`,
            )
            .iterate(...(scoped ? [expr, scope] : [expr])),
        ),
        limit,
        byScore,
      );
      if (unknown.length === 0) return best;
      this.learnLengths(unknown.map((u) => u.seq));
      return topK([...best, ...unknown.map((u) => scored(u.seq, u.mi))], limit, byScore);
    } else {
      const rows = this.rows('1 = 1', [], scope, 'seq');
      const xs = bm25Js(
        rows.map((r) => r.content),
        text,
      );
      all = rows.map((r, i) => ({ seq: r.seq, score: normaliseBm25(xs[i]) })).filter((r) => r.score > 0);
    }
    return topK(all, limit, byScore);
  }

  /**
   * Token counts of this store's documents (FTS4 only), as the index's %_docsize holds them: matchinfo's `l`
   * made FTS4 look up %_docsize once per hit, ~40% of a full-text query at 100k entries.
   * Read whole on the first query (one scan, ~40 B a document in memory), then the seqs a query meets that are
   * not known yet (written since) in one statement. Exact: a seq is never reused (AUTOINCREMENT) except by a
   * compaction digest, whose old row goes through onDelete first, which forgets it.
   */
  private lengths?: Map<number, number>;

  private docLengths(): Map<number, number> {
    if (!this.lengths) {
      const lengths = new Map<number, number>();
      for (const r of this.db.prepare(`SELECT docid, size FROM ${this.fts}_docsize`).iterate()) lengths.set(Number(r.docid), docsizeColumn0(r.size as Uint8Array));
      this.lengths = lengths;
    }
    return this.lengths;
  }

  private learnLengths(seqs: number[]): void {
    const lengths = this.docLengths();
    for (const r of this.db.prepare(`SELECT docid, size FROM ${this.fts}_docsize WHERE docid IN (SELECT value FROM json_each(?))`).iterate(JSON.stringify(seqs)))
      lengths.set(Number(r.docid), docsizeColumn0(r.size as Uint8Array));
  }

  /** Cosine ranking over the scope's vectors (brute force: edge-sized stores), score (cos + 1) / 2. */
  private vectorRank(qv: number[], scope: string, limit: number): Ranked[] {
    const rows = this.db
      .prepare(
        'SELECT v.seq AS seq, v.vec AS vec FROM claw_memory_vectors v JOIN claw_memory_entries e ON e.seq = v.seq WHERE e.sid = ? AND e.scope = ?',
      )
      .iterate(this.sid, scope);
    // Scored while stepping, the best `limit` kept (as the full-text ranking does): the same order as sorting all.
    return topK(
      (function* () {
        for (const r of rows) yield { seq: Number(r.seq), score: (cosine(qv, blobToVector(r.vec as Uint8Array)) + 1) / 2 };
      })(),
      limit,
      byScore,
    );
  }
}
