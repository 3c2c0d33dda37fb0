// `key-value` store: one value per (scope, key), last writer wins (runtime profile §8): a store with an existing
// key replaces the entry (new id, new timestamp, newest in insertion order). Query: `key`.
// `spec.scope`: 'global' (default) ignores the scope value; 'per-identity' / 'per-channel' need one
// (StoreContext.scope: the identity or channel name) on every call, and keep each value's keys apart.
import { BaseStore, toOut, type Normalised } from './base.ts';
import { MemoryParamsError, type EntryIn, type Query, type QueryResult } from './types.ts';

export class KeyValueStore extends BaseStore {
  readonly kind = 'key-value' as const;

  protected override validate(e: EntryIn, i: number): void {
    if (typeof e.key !== 'string' || e.key === '')
      throw new MemoryParamsError('memory.key_required', `entries[${i}].key is required by key-value store '${this.name}'`);
  }

  protected override beforeInsert(e: Normalised, scope: string): void {
    this.deleteSeqs(this.seqs('key = ?', [e.key], scope));
  }

  protected override supportsSummarize(): boolean {
    return false;
  }

  protected async runQuery(q: Query, scope: string): Promise<QueryResult> {
    if (q.type !== 'key') this.unsupported(q, 'key');
    if (typeof q.key !== 'string' || q.key === '') throw new MemoryParamsError('memory.invalid_query', 'query.key is required');
    const rows = this.rows('key = ?', [q.key], scope, 'seq DESC', 1);
    return { entries: rows.map((r) => toOut(r)), search: 'key' };
  }
}
