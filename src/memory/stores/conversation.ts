// `conversation` store: chat history in insertion order. Query: `time-range` (the entries whose timestamps fall in
// the range, in insertion order; `top_k` keeps the k inserted last, still returned oldest first), and `semantic` (seed TV-L3-03 queries a conversation
// store that way): BM25 over the partition's entries in JS, the same formula and [0,1] score as semantic stores,
// without an index — a conversation is bounded by its retention, and writes stay one row (no FTS rows to journal).
import { BaseStore, isoTime, msOf, toOut } from './base.ts';
import { bm25Js, normaliseBm25 } from './ranking.ts';
import { DEFAULT_TOP_K } from './semantic.ts';
import { MemoryParamsError, type Query, type QueryResult } from './types.ts';
import type { SqlValue } from '../sqlite/types.ts';

/** Both `query.time_range.{from,to}` (spec §9.3.4) and top-level `from`/`to` (the port); bounds inclusive, either may be open. Params in Unix ms, as `ts` is stored. */
export function timeBounds(q: Query): { where: string; params: SqlValue[] } {
  const from = q.time_range?.from ?? q.from;
  const to = q.time_range?.to ?? q.to;
  const parts: string[] = ['1 = 1'];
  const params: SqlValue[] = [];
  if (from !== undefined) {
    parts.push('ts >= ?');
    params.push(msOf(isoTime(String(from), 'time_range.from')));
  }
  if (to !== undefined) {
    parts.push('ts <= ?');
    params.push(msOf(isoTime(String(to), 'time_range.to')));
  }
  return { where: parts.join(' AND '), params };
}

export class ConversationStore extends BaseStore {
  readonly kind = 'conversation' as const;

  protected async runQuery(q: Query, scope: string): Promise<QueryResult> {
    if (q.type === 'semantic') return this.textQuery(q, scope);
    if (q.type !== 'time-range') this.unsupported(q, 'time-range, semantic');
    const { where, params } = timeBounds(q);
    // Insertion order, not timestamp order (runtime profile §Memory: a conversation's entries are ordered by
    // insertion time). A board without a real-time clock boots with its clock behind what it stored before the
    // reboot until NTP syncs: ordered by timestamp, the turns after the reboot would sort before the earlier ones,
    // and a resumed history (src/agent/history.ts) would take the wrong last turns. `seq` is the order they came in.
    const rows = this.rows(where, params, scope, 'seq DESC', q.top_k).reverse();
    return { entries: rows.map((r) => toOut(r)), search: 'time-range' };
  }

  private textQuery(q: Query, scope: string): QueryResult {
    if (typeof q.text !== 'string' || q.text.trim() === '')
      throw new MemoryParamsError('memory.invalid_query', 'query.text is required for a semantic query');
    const rows = this.rows('1 = 1', [], scope, 'seq');
    const xs = bm25Js(
      rows.map((r) => r.content),
      q.text,
    );
    const ranked = rows
      .map((r, i) => ({ r, score: normaliseBm25(xs[i]) }))
      .filter((x) => x.score > 0)
      // Best first; ties: the newer entry first (a conversation's latest word on a topic matters most).
      .sort((a, b) => b.score - a.score || b.r.seq - a.r.seq)
      .slice(0, q.top_k ?? DEFAULT_TOP_K);
    return { entries: ranked.map((x) => toOut(x.r, x.score)), search: 'fts', fts: 'js' };
  }
}
