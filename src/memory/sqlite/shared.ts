// Pieces both adapters use: parameter normalisation and the transaction/savepoint helper.
import { ClawError } from '../../protocol/errors.ts';
import { isWellFormed, toWellFormed } from '../../protocol/well-formed.ts';
import type { BindParams, SqlValue, SqliteDatabase } from './types.ts';

/** Whether this runtime is Bun (bun:sqlite then exists). */
export const isBun = (): boolean => typeof (globalThis as { Bun?: unknown }).Bun !== 'undefined';

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

/**
 * The parameters with every string made well-formed (lone surrogates → U+FFFD); `params` itself when nothing
 * changes. sql.js binds a lone surrogate as WTF-8 bytes, node:sqlite as U+FFFD, the journal (TextEncoder) as
 * U+FFFD: two different strings could be one row after a replay but two before it, and a UNIQUE key that held
 * live fail on reopen. Encoding one well-formed string is the same everywhere, so the live database and its
 * replay agree for any input (the wire refuses such strings anyway; this covers what the runtime itself stores).
 */
export function wellFormedParams(params: BindParams): BindParams {
  let out: unknown[] | undefined;
  for (let i = 0; i < params.length; i++) {
    const p = params[i];
    let q: unknown = p;
    if (typeof p === 'string') {
      if (!isWellFormed(p)) q = toWellFormed(p);
    } else if (isNamed(p)) {
      let named: Record<string, SqlValue> | undefined;
      for (const [k, v] of Object.entries(p)) {
        if (typeof v === 'string' && !isWellFormed(v)) (named ??= { ...p })[k] = toWellFormed(v);
      }
      if (named) q = named;
    }
    if (q !== p) (out ??= params.slice())[i] = q;
  }
  return (out as BindParams | undefined) ?? params;
}

export function toError(e: unknown, code = 'sqlite.error'): Error {
  if (e instanceof Error) return e;
  // sql.js throws plain strings for API misuse ("Wrong API use : ...").
  return new ClawError(code, String(e));
}

/**
 * Transaction with nesting: the outermost level is BEGIN/COMMIT, inner levels SAVEPOINTs. `beforeCommit` runs
 * after `fn` succeeded and before COMMIT (the journalled adapter appends and fsyncs its journal record there); if it
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

/**
 * The FTS engine compiled into this SQLite, from its compile options (FTS4 comes with ENABLE_FTS3). Asked, not
 * tried: creating a temp virtual table of a module that is not compiled in (FTS5 in sql.js) fails, and on sql.js
 * that failure alone took ~16 ms of CPU at every open (measured in isolation, with lazy and eager WebAssembly
 * compilation alike; BENCH.md "Level 3 agent"), then the FTS4 table was created and dropped. `fts5: false` asks
 * for FTS4 at most (the journalled layout, which sql.js must be able to replay).
 */
export function probeFts(get: (sql: string) => Record<string, unknown> | undefined, allow: { fts5?: boolean } = {}): 'fts5' | 'fts4' | 'none' {
  let r: Record<string, unknown> | undefined;
  try {
    r = get("SELECT sqlite_compileoption_used('ENABLE_FTS5') AS fts5, sqlite_compileoption_used('ENABLE_FTS3') + sqlite_compileoption_used('ENABLE_FTS4') AS fts4");
  } catch {
    // A SQLite built without its compile-option diagnostics: the stores rank in JS (same scores, slower).
  }
  return allow.fts5 !== false && Number(r?.fts5) > 0 ? 'fts5' : Number(r?.fts4) > 0 ? 'fts4' : 'none';
}

/**
 * Runs `ddl` (statements that create what is missing, `IF NOT EXISTS`) only when one of the schema objects `names`
 * is absent. On sql.js every write is a journal record, fsynced, and replayed at every later open: DDL that finds
 * everything in place would add one per open, and its fsync, for nothing.
 */
export function createMissing(db: SqliteDatabase, names: readonly string[], ddl: string): void {
  const found = db.prepare(`SELECT count(*) AS n FROM sqlite_master WHERE name IN (${names.map(() => '?').join(', ')})`).get(...names);
  if (Number(found?.n) < names.length) db.exec(ddl);
}
