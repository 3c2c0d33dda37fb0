// The journalled adapter (`adapter: sqljs`, docs/memory.md "Storage"): a SQLite database that lives in memory, held
// by an engine that can load and export the whole image, with every write passed to a `WriteLog` (durable.ts: the
// journal and snapshots) before it is acknowledged. Two engines fit: sql.js (SQLite compiled to WebAssembly, on
// every Node >= 18 and Bun; ./sqljs.ts) and bun:sqlite's in-memory database (serialize/deserialize;
// ./bun-image.ts). Both hold the same image and replay the same journal, so a data directory moves between them.
import { ClawError } from '../../protocol/errors.ts';
import { TxRunner, probeFts, splitParams, toError, wellFormedParams } from './shared.ts';
import type { BindParams, Row, RunResult, SqlValue, SqliteCapabilities, SqliteDatabase, Statement } from './types.ts';

/**
 * What an engine gives this adapter: the slice of sql.js's API it uses (sql.js ships no types; bun-image.ts
 * implements the same slice on bun:sqlite). A statement is bound, stepped row by row and reset; unbound
 * parameters read as NULL.
 */
export interface ImageStatement {
  bind(values?: SqlValue[] | Record<string, SqlValue>): boolean;
  step(): boolean;
  get(): SqlValue[];
  getColumnNames(): string[];
  reset(): boolean;
  free(): boolean;
}
export interface ImageDb {
  /** Runs one or more statements; results are not read. */
  exec(sql: string): unknown;
  run(sql: string): unknown;
  prepare(sql: string): ImageStatement;
  /** The whole database as a SQLite file image. */
  export(): Uint8Array;
  close(): void;
  /** sqlite3_changes(): rows changed by the last INSERT, UPDATE or DELETE. */
  getRowsModified(): number;
}

/** Which engine holds the image (logged at `memory open`). */
export type ImageEngine = 'sql.js' | 'bun:sqlite';

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

export class ImageDatabase implements SqliteDatabase {
  readonly adapter = 'sqljs' as const;
  readonly capabilities: SqliteCapabilities;
  private readonly cache = new Map<string, ImageStatement>();
  /**
   * Column names per cached statement. sql.js's getAsObject() asks WASM for every column name on every row (one
   * call + string decode per column): 0.1–0.35 ms of a 100k-entry full-text query. Cleared
   * on any DDL, after which SQLite may re-prepare a `SELECT *` with other columns.
   */
  private readonly names = new Map<ImageStatement, string[]>();
  private readonly tx: TxRunner;
  private pending: LoggedStatement[] = [];
  private closed = false;
  /** Set while durable.ts replays its journal: statements run but are not logged again. */
  replaying = false;

  constructor(
    readonly raw: ImageDb,
    readonly engine: ImageEngine,
    private readonly log?: WriteLog,
    private readonly onClose?: () => void,
  ) {
    this.tx = new TxRunner((sql) => this.raw.run(sql));
    // FTS4 at most, whatever the engine has: the image and the journal must open and replay on sql.js too,
    // which is built with FTS3/FTS4 only (a data directory moves between runtimes; docs/memory.md).
    this.capabilities = { fts: probeFts((sql) => this.firstRow(sql), { fts5: false }) };
  }

  /** The first row of a statement without parameters (not cached, not journaled). */
  private firstRow(sql: string): Row | undefined {
    const s = this.raw.prepare(sql);
    try {
      if (!s.step()) return undefined;
      const names = s.getColumnNames();
      const values = s.get();
      return Object.fromEntries(names.map((n, i) => [n, values[i]]));
    } finally {
      s.free();
    }
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

  private stmt(sql: string): ImageStatement {
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
        const [oldestSql, oldest] = this.cache.entries().next().value as [string, ImageStatement];
        oldest.free();
        this.cache.delete(oldestSql);
        this.names.delete(oldest);
      }
    }
    this.cache.set(sql, s);
    return s;
  }

  private bound(sql: string, params: BindParams): ImageStatement {
    const s = this.stmt(sql);
    const { named, positional } = splitParams(params);
    try {
      if (named && positional.length > 0) {
        throw new ClawError('sqlite.params', 'journalled adapter: pass either named or positional parameters, not both');
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

