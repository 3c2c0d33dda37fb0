// Pieces both adapters use: parameter normalisation and the transaction/savepoint helper.
import { ClawError } from '../../protocol/errors.ts';
import type { BindParams, SqlValue } from './types.ts';

export function isNamed(p: unknown): p is Record<string, SqlValue> {
  return typeof p === 'object' && p !== null && !(p instanceof Uint8Array) && !Array.isArray(p);
}

/**
 * Splits node:sqlite-style arguments into named and positional parts. Bare names (`{ id: 1 }`) are expanded to
 * the three SQLite prefixes so engines that need the prefix (sql.js, bun without `strict`) bind them too.
 */
export function splitParams(params: BindParams): { named?: Record<string, SqlValue>; positional: SqlValue[] } {
  if (params.length > 0 && isNamed(params[0])) {
    const named: Record<string, SqlValue> = {};
    for (const [k, v] of Object.entries(params[0])) {
      if (/^[:$@]/.test(k)) named[k] = v;
      else named[`:${k}`] = named[`$${k}`] = named[`@${k}`] = v;
    }
    return { named, positional: params.slice(1) as SqlValue[] };
  }
  return { positional: params as SqlValue[] };
}

export function toError(e: unknown, code = 'sqlite.error'): Error {
  if (e instanceof Error) return e;
  // sql.js throws plain strings for API misuse ("Wrong API use : ...").
  return new ClawError(code, String(e));
}

/**
 * Transaction with nesting: the outermost level is BEGIN/COMMIT, inner levels SAVEPOINTs. `beforeCommit` runs
 * after `fn` succeeded and before COMMIT (the sql.js adapter appends and fsyncs its journal record there); if it
 * throws, everything is rolled back and the error propagates.
 */
export class TxRunner {
  depth = 0;
  constructor(private readonly execRaw: (sql: string) => void) {}

  run<T>(fn: () => T, hooks: { begin?: () => unknown; beforeCommit?: () => void; afterCommit?: () => void; rollback?: (mark: unknown) => void } = {}): T {
    if (this.depth > 0) {
      const name = `claw_sp${this.depth}`;
      const mark = hooks.begin?.();
      this.execRaw(`SAVEPOINT ${name}`);
      this.depth++;
      try {
        const r = fn();
        this.depth--;
        this.execRaw(`RELEASE ${name}`);
        return r;
      } catch (e) {
        this.depth--;
        this.execRaw(`ROLLBACK TO ${name}`);
        this.execRaw(`RELEASE ${name}`);
        hooks.rollback?.(mark);
        throw e;
      }
    }
    const mark = hooks.begin?.();
    this.execRaw('BEGIN');
    this.depth = 1;
    try {
      const r = fn();
      hooks.beforeCommit?.();
      this.execRaw('COMMIT');
      this.depth = 0;
      hooks.afterCommit?.();
      return r;
    } catch (e) {
      this.depth = 0;
      try {
        this.execRaw('ROLLBACK');
      } catch {
        // SQLite already rolled back (some errors end the transaction themselves).
      }
      hooks.rollback?.(mark);
      throw e;
    }
  }
}

/** Probes the FTS engine by creating and dropping a temp virtual table. */
export function probeFts(execRaw: (sql: string) => void): 'fts5' | 'fts4' | 'none' {
  for (const engine of ['fts5', 'fts4'] as const) {
    try {
      execRaw(`CREATE VIRTUAL TABLE temp.claw_fts_probe USING ${engine}(x)`);
      execRaw('DROP TABLE temp.claw_fts_probe');
      return engine;
    } catch {
      // not compiled in
    }
  }
  return 'none';
}
