// sql.js adapter: SQLite compiled to WebAssembly, so it runs on every Node >= 18 and Bun with no native
// addon. The database lives in WASM memory; durability (when a path is given) comes from durable.ts, which
// receives every write through the `WriteLog` hook below before it is acknowledged.
//
// Loading: the JS glue (~45 KB minified) is bundled but evaluated only on first open (dynamic import); the
// 688 KB sql-wasm.wasm is read from disk beside the bundle (dist/sql-wasm.wasm) or, in development and tests,
// from node_modules/sql.js/dist. Beside rather than embedded: the inline build base64s the wasm into the JS
// (+~930 KB in claw.mjs, parsed on every start even when memory is unused) — see README.md for measurements.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ClawError } from '../../protocol/errors.ts';
import { TxRunner, probeFts, splitParams, toError, wellFormedParams } from './shared.ts';
import type { BindParams, Row, RunResult, SqlValue, SqliteCapabilities, SqliteDatabase, Statement } from './types.ts';

// The slice of sql.js we use (the package ships no types).
export interface SqlJsStatement {
  bind(values?: SqlValue[] | Record<string, SqlValue>): boolean;
  step(): boolean;
  getAsObject(): Row;
  get(): SqlValue[];
  getColumnNames(): string[];
  reset(): boolean;
  free(): boolean;
}
export interface SqlJsDb {
  exec(sql: string): { columns: string[]; values: SqlValue[][] }[];
  run(sql: string): unknown;
  prepare(sql: string): SqlJsStatement;
  export(): Uint8Array;
  close(): void;
  getRowsModified(): number;
}
export interface SqlJsStatic {
  Database: new (data?: Uint8Array | null) => SqlJsDb;
}

let loading: Promise<SqlJsStatic> | undefined;

/** Candidate locations of sql-wasm.wasm, in order: explicit, beside this module (the bundle), node_modules. */
export function locateWasm(explicit?: string): string {
  if (explicit) return explicit;
  const beside = fileURLToPath(new URL('./sql-wasm.wasm', import.meta.url));
  if (existsSync(beside)) return beside;
  try {
    return createRequire(import.meta.url).resolve('sql.js/dist/sql-wasm.wasm');
  } catch {
    return beside; // reported as missing by loadSqlJs, naming the path we expected
  }
}

/** Loads sql.js once per process (sql.js itself caches its module after the first init). */
export function loadSqlJs(wasmPath?: string): Promise<SqlJsStatic> {
  loading ??= (async () => {
    const path = locateWasm(wasmPath);
    let wasmBinary: Uint8Array;
    try {
      wasmBinary = readFileSync(path);
    } catch (e) {
      throw new ClawError('sqlite.wasm_missing', `sql.js WebAssembly not found at ${path} (ship sql-wasm.wasm beside the bundle)`, { cause: e });
    }
    const mod = (await import('sql.js')) as { default?: unknown };
    const init = (mod.default ?? mod) as (cfg: { wasmBinary: Uint8Array }) => Promise<SqlJsStatic>;
    // The glue's Node branch reads the CommonJS `__dirname`, which an ESM bundle (dist/claw.mjs) does not
    // have. It reads it synchronously inside init(), so a global shim for the duration of that call suffices.
    const g = globalThis as Record<string, unknown>;
    const shim = !('__dirname' in g);
    if (shim) g.__dirname = dirname(path);
    try {
      return await init({ wasmBinary });
    } finally {
      if (shim) delete g.__dirname;
    }
  })().catch((e) => {
    loading = undefined;
    throw e;
  });
  return loading;
}

/** One journaled statement: `params` undefined means it ran through exec(). */
export interface LoggedStatement {
  sql: string;
  params?: BindParams;
}

/** What durable.ts plugs in. `append` must make the statements durable (fsync) or throw. */
export interface WriteLog {
  append(stmts: LoggedStatement[]): number;
  /** Undo an append made at `mark` (when COMMIT itself failed after the record was written). */
  undo(mark: number): void;
  afterCommit(): void;
}

const READ_ONLY = /^\s*(select|explain|values|pragma)\b/i;
const WRITE_WORD = /\b(insert|update|delete|replace|create|drop|alter)\b/i;
const TX_CONTROL = /^\s*(begin|commit|end|rollback|savepoint|release)\b/i;
const CACHE_LIMIT = 256;
/** Statements that can change a result's column names (a `SELECT *` re-prepared after the schema changed). */
const DDL = /\b(create|drop|alter)\b/i;

export class SqlJsDatabase implements SqliteDatabase {
  readonly adapter = 'sqljs' as const;
  readonly capabilities: SqliteCapabilities;
  private readonly cache = new Map<string, SqlJsStatement>();
  /**
   * Column names per cached statement. sql.js's getAsObject() asks WASM for every column name on every row (one
   * call + string decode per column): 0.1–0.35 ms of a 100k-entry full-text query. Cleared
   * on any DDL, after which SQLite may re-prepare a `SELECT *` with other columns.
   */
  private readonly names = new Map<SqlJsStatement, string[]>();
  private readonly tx: TxRunner;
  private pending: LoggedStatement[] = [];
  private closed = false;
  /** Set while durable.ts replays its journal: statements run but are not logged again. */
  replaying = false;

  constructor(
    readonly raw: SqlJsDb,
    private readonly log?: WriteLog,
    private readonly onClose?: () => void,
  ) {
    this.tx = new TxRunner((sql) => this.raw.run(sql));
    this.capabilities = {
      fts: probeFts((sql) => {
        const [r] = this.raw.exec(sql);
        return r && Object.fromEntries(r.columns.map((c, i) => [c, r.values[0][i]]));
      }),
    };
  }

  private get logging(): boolean {
    return this.log !== undefined && !this.replaying;
  }

  exec(sql: string): void {
    this.check();
    if (this.logging && TX_CONTROL.test(sql)) {
      throw new ClawError('sqlite.tx_control', 'use transaction() instead of BEGIN/COMMIT in exec(): the journal needs to see transaction boundaries');
    }
    this.write({ sql }, !/^\s*(select|explain)\b/i.test(sql) || WRITE_WORD.test(sql), () => {
      try {
        this.raw.exec(sql);
      } catch (e) {
        throw toError(e);
      }
    });
  }

  prepare(sql: string): Statement {
    this.check();
    this.stmt(sql); // compile now so syntax errors surface at prepare(), as with node:sqlite
    const isRead = READ_ONLY.test(sql) || (/^\s*with\b/i.test(sql) && !WRITE_WORD.test(sql));
    // The journal records exactly what was bound (shared.ts wellFormedParams): replay rebuilds the same rows.
    return {
      run: (...raw) => {
        const params = wellFormedParams(raw);
        return this.write({ sql, params }, true, () => this.runNow(sql, params));
      },
      get: (...raw) => {
        const params = wellFormedParams(raw);
        return this.write({ sql, params }, !isRead, () => this.rows(sql, params, 1)[0]);
      },
      all: (...raw) => {
        const params = wellFormedParams(raw);
        return this.write({ sql, params }, !isRead, () => this.rows(sql, params, Infinity));
      },
      iterate: (...raw) => {
        const params = wellFormedParams(raw);
        // A write is journaled and applied whole, as all() does; only a read can stream.
        return isRead ? this.each(sql, params) : this.write({ sql, params }, true, () => this.rows(sql, params, Infinity))[Symbol.iterator]();
      },
    };
  }

  transaction<T>(fn: () => T): T {
    this.check();
    if (!this.logging) return this.tx.run(fn);
    let mark = -1;
    return this.tx.run(fn, {
      begin: () => this.pending.length,
      beforeCommit: () => {
        const stmts = this.pending;
        this.pending = [];
        if (stmts.length > 0) mark = this.log!.append(stmts);
      },
      afterCommit: () => this.log!.afterCommit(),
      rollback: (m) => {
        this.pending.length = Math.min(this.pending.length, m as number);
        if (this.tx.depth === 0) {
          this.pending = [];
          if (mark >= 0) this.log!.undo(mark);
        }
      },
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.cache.values()) s.free();
    this.cache.clear();
    this.names.clear();
    this.raw.close();
    this.onClose?.();
  }

  /** Runs `apply`; when it changes data and a journal is attached, the change is journaled before returning. */
  private write<T>(entry: LoggedStatement, isWrite: boolean, apply: () => T): T {
    if (isWrite && this.names.size > 0 && DDL.test(entry.sql)) this.names.clear();
    if (!isWrite || !this.logging) return apply();
    if (this.tx.depth > 0) {
      const r = apply();
      this.pending.push(entry);
      return r;
    }
    // Autocommit write: wrap it so a failed journal append rolls the in-memory change back.
    return this.transaction(() => {
      const r = apply();
      this.pending.push(entry);
      return r;
    });
  }

  private check(): void {
    if (this.closed) throw new ClawError('sqlite.closed', 'database is closed');
  }

  private stmt(sql: string): SqlJsStatement {
    let s = this.cache.get(sql);
    if (s) {
      this.cache.delete(sql);
    } else {
      try {
        s = this.raw.prepare(sql);
      } catch (e) {
        throw toError(e);
      }
      if (this.cache.size >= CACHE_LIMIT) {
        const [oldestSql, oldest] = this.cache.entries().next().value as [string, SqlJsStatement];
        oldest.free();
        this.cache.delete(oldestSql);
        this.names.delete(oldest);
      }
    }
    this.cache.set(sql, s);
    return s;
  }

  private bound(sql: string, params: BindParams): SqlJsStatement {
    const s = this.stmt(sql);
    const { named, positional } = splitParams(params);
    try {
      if (named && positional.length > 0) {
        throw new ClawError('sqlite.params', 'sql.js adapter: pass either named or positional parameters, not both');
      }
      if (named) s.bind(named);
      else if (positional.length > 0) s.bind(positional);
      else s.reset();
    } catch (e) {
      s.reset();
      throw toError(e);
    }
    return s;
  }

  private runNow(sql: string, params: BindParams): RunResult {
    const s = this.bound(sql, params);
    try {
      while (s.step()) {
        // drain (INSERT ... RETURNING and friends)
      }
    } catch (e) {
      throw toError(e);
    } finally {
      s.reset();
    }
    const changes = this.raw.getRowsModified();
    const idStmt = this.stmt('SELECT last_insert_rowid()');
    idStmt.step();
    const lastInsertRowid = idStmt.get()[0] as number;
    idStmt.reset();
    return { changes, lastInsertRowid };
  }

  private rows(sql: string, params: BindParams, limit: number): Row[] {
    const out: Row[] = [];
    // SQLite completes all changes of a DML ... RETURNING statement on its first step, so stopping early is safe.
    for (const row of this.each(sql, params)) if (out.push(row) >= limit) break;
    return out;
  }

  /** The rows of a bound statement, stepped as they are asked for; the statement is reset when the loop ends. */
  private *each(sql: string, params: BindParams): Generator<Row, void, undefined> {
    this.check();
    const s = this.bound(sql, params);
    try {
      for (;;) {
        let values: SqlValue[];
        let names: string[] | undefined;
        try {
          if (!s.step()) return;
          names = this.names.get(s);
          if (names === undefined) this.names.set(s, (names = s.getColumnNames()));
          values = s.get();
        } catch (e) {
          throw toError(e);
        }
        const row: Row = {};
        for (let i = 0; i < names.length; i++) row[names[i]] = values[i];
        yield row;
      }
    } finally {
      s.reset();
    }
  }
}

/** Opens an in-memory sql.js database (optionally from an image) with an optional write log attached. */
export async function openSqlJsRaw(opts: { wasmPath?: string; image?: Uint8Array } = {}): Promise<SqlJsDb> {
  const SQL = await loadSqlJs(opts.wasmPath);
  return new SQL.Database(opts.image ?? null);
}
