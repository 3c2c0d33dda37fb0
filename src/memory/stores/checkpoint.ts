// `checkpoint` store (spec §5.6: "resumable task state, planner snapshots; exact lookup by task / step"): each
// entry is one snapshot of the task named by its `key`. `checkpoint.max_snapshots` keeps the newest N snapshots
// per task (older ones go in the same transaction as the write), `checkpoint.ttl` expires snapshots older than
// the duration (never returned, purged on the next write or compaction).
// Query `key`: the task's snapshots, newest first (`top_k: 1` = the one to resume from); `time-range`:
// chronological, like a conversation. Compaction applies ttl and max_snapshots; `summarize` is refused
// (a digest of task states is not a state one can resume from).
import { BaseStore, isoTime, msOf, parseDuration, toOut, type Normalised } from './base.ts';
import { timeBounds } from './conversation.ts';
import { MemoryParamsError, type CompactOptions, type CompactResult, type EntryIn, type Query, type QueryResult, type StoreContext } from './types.ts';
import type { SqlValue } from '../sqlite/types.ts';

export class CheckpointStore extends BaseStore {
  readonly kind = 'checkpoint' as const;
  /** Task keys written by the current store() call: only their snapshot count can have grown. */
  private touched = new Set<string>();

  protected override validate(e: EntryIn, i: number): void {
    if (typeof e.key !== 'string' || e.key === '')
      throw new MemoryParamsError('memory.key_required', `entries[${i}].key (the task id) is required by checkpoint store '${this.name}'`);
  }

  protected override supportsSummarize(): boolean {
    return false;
  }

  protected override beforeInsert(e: Normalised): void {
    this.touched.add(e.key!);
  }

  /** Unix ms (schema.ts: ts is stored as ms). */
  private ttlCutoff(_now: string): number | undefined {
    const ttl = this.spec.checkpoint?.ttl;
    // Aged as retention.max_age is (base.ts): across a wall-clock step, by the monotonic clock.
    return ttl === undefined ? undefined : this.ages.cutoff(parseDuration(ttl));
  }

  protected override enforceRetention(scope: string, now: string): void {
    super.enforceRetention(scope, now);
    const cutoff = this.ttlCutoff(now);
    if (cutoff !== undefined) this.deleteSeqs(this.seqs('ts < ?', [cutoff], scope));
    const max = this.spec.checkpoint?.max_snapshots;
    if (max !== undefined) {
      for (const key of this.touched) {
        const edge = this.db
          .prepare('SELECT seq FROM claw_memory_entries WHERE sid = ? AND scope = ? AND key = ? ORDER BY seq DESC LIMIT 1 OFFSET ?')
          .get(this.sid, scope, key, max);
        if (edge) this.deleteSeqs(this.seqs('key = ? AND seq <= ?', [key, Number(edge.seq)], scope));
      }
    }
    this.touched.clear();
  }

  protected async runQuery(q: Query, scope: string): Promise<QueryResult> {
    const cutoff = this.ttlCutoff(isoTime(this.now()));
    const live = cutoff === undefined ? { where: '1 = 1', params: [] as SqlValue[] } : { where: 'ts >= ?', params: [cutoff] as SqlValue[] };
    if (q.type === 'key') {
      if (typeof q.key !== 'string' || q.key === '') throw new MemoryParamsError('memory.invalid_query', 'query.key (the task id) is required');
      const rows = this.rows(`key = ? AND ${live.where}`, [q.key, ...live.params], scope, 'seq DESC', q.top_k);
      return { entries: rows.map((r) => toOut(r)), search: 'key' };
    }
    if (q.type === 'time-range') {
      const { where, params } = timeBounds(q);
      const rows = this.rows(`${where} AND ${live.where}`, [...params, ...live.params], scope, 'ts DESC, seq DESC', q.top_k).reverse();
      return { entries: rows.map((r) => toOut(r)), search: 'time-range' };
    }
    this.unsupported(q, 'key, time-range');
  }

  /** Compaction of checkpoints = their own rules applied now: ttl, then max_snapshots per task. */
  override async compact(opts: CompactOptions = {}, ctx: StoreContext = {}): Promise<CompactResult> {
    this.assertOpen();
    if (opts.strategy === 'summarize') throw new MemoryParamsError('memory.unsupported_compaction', `checkpoint store '${this.name}' cannot be summarized`);
    const before = this.count();
    const now = isoTime(this.now());
    const scopes =
      (this.spec.scope ?? 'global') !== 'global' && ctx.scope === undefined
        ? this.db.prepare('SELECT DISTINCT scope FROM claw_memory_entries WHERE sid = ?').all(this.sid).map((r) => String(r.scope))
        : [this.scopeOf(ctx)];
    this.db.transaction(() => {
      for (const scope of scopes) {
        for (const r of this.db.prepare('SELECT DISTINCT key FROM claw_memory_entries WHERE sid = ? AND scope = ?').all(this.sid, scope))
          this.touched.add(String(r.key));
        this.enforceRetention(scope, now);
      }
    });
    return { entries_before: before, entries_after: this.count(), strategy: 'truncate' };
  }
}
