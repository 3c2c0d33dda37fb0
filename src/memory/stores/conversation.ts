// `conversation` store: chat history in insertion order. Query: `time-range` (chronological; `top_k` keeps the
// most recent k of the range, still returned oldest first).
import { BaseStore, isoTime, toOut } from './base.ts';
import type { Query, QueryResult } from './types.ts';
import type { SqlValue } from '../sqlite/types.ts';

/** Both `query.time_range.{from,to}` (spec §9.3.4) and top-level `from`/`to` (the port); bounds inclusive, either may be open. */
export function timeBounds(q: Query): { where: string; params: SqlValue[] } {
  const from = q.time_range?.from ?? q.from;
  const to = q.time_range?.to ?? q.to;
  const parts: string[] = ['1 = 1'];
  const params: SqlValue[] = [];
  if (from !== undefined) {
    parts.push('ts >= ?');
    params.push(isoTime(String(from), 'time_range.from'));
  }
  if (to !== undefined) {
    parts.push('ts <= ?');
    params.push(isoTime(String(to), 'time_range.to'));
  }
  return { where: parts.join(' AND '), params };
}

export class ConversationStore extends BaseStore {
  readonly kind = 'conversation' as const;

  protected async runQuery(q: Query, scope: string): Promise<QueryResult> {
    if (q.type !== 'time-range') this.unsupported(q, 'time-range');
    const { where, params } = timeBounds(q);
    const rows = this.rows(where, params, scope, 'ts DESC, seq DESC', q.top_k).reverse();
    return { entries: rows.map((r) => toOut(r)), search: 'time-range' };
  }
}
