// Native adapter: node:sqlite's DatabaseSync (Node >= 22.5; unflagged from 22.13) or Bun's bun:sqlite.
// Both write their own file with SQLite's rollback journal / WAL, so no journal of ours is involved. Imported
// dynamically through a variable so bundlers leave the specifier alone and Node 18/20 never load it.
import { ClawError } from '../../protocol/errors.ts';
import { TxRunner, isBun, probeFts, splitParams, wellFormedParams } from './shared.ts';
import type { BindParams, Row, RunResult, SqlValue, SqliteCapabilities, SqliteDatabase, Statement } from './types.ts';

interface NativeStatement {
  run(...p: unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint } | undefined;
  get(...p: unknown[]): Row | null | undefined;
  all(...p: unknown[]): Row[];
  /** node:sqlite from 22.13 / 23.4, bun:sqlite. */
  iterate?(...p: unknown[]): IterableIterator<Row>;
}
interface NativeDb {
  exec(sql: string): unknown;
  prepare(sql: string): NativeStatement;
  close(): void;
}

type Engine = 'node' | 'bun';

const STATEMENT_CACHE = 256;

/**
 * Node 22 emits "ExperimentalWarning: SQLite is an experimental feature" when node:sqlite loads, and prints it as
 * plain text on stderr — where this runtime promises JSON log lines only. That one warning is dropped while the
 * module loads (the adapter choice is logged as `memory open … adapter: native` instead); any other warning passes.
 */
async function quietly<T>(load: () => Promise<T>): Promise<T> {
  const proc = (globalThis as { process?: { emitWarning: (...a: unknown[]) => void } }).process;
  if (!proc) return load();
  const emit = proc.emitWarning;
  proc.emitWarning = (w: unknown, ...rest: unknown[]) => {
    const text = typeof w === 'string' ? w : (w as Error | undefined)?.message;
    if (typeof text === 'string' && text.startsWith('SQLite is an experimental feature')) return;
    emit.call(proc, w, ...rest);
  };
  try {
    return await load();
  } finally {
    proc.emitWarning = emit;
  }
}

/** Loads the runtime's SQLite module, or returns undefined when there is none (Node < 22.5, or flagged off). */
export async function loadNative(): Promise<{ engine: Engine; open: (path: string) => NativeDb } | undefined> {
  const dynamicImport = (spec: string) => import(spec) as Promise<Record<string, unknown>>;
  if (isBun()) {
    try {
      const m = await dynamicImport('bun:sqlite');
      const Database = m.Database as new (p: string, o?: object) => NativeDb;
      // strict: bind named parameters without their prefix, as node:sqlite does.
      return { engine: 'bun', open: (p) => new Database(p, { create: true, strict: true }) };
    } catch {
      // fall through to node:sqlite (Bun implements some node: modules)
    }
  }
  try {
    const m = await quietly(() => dynamicImport('node:sqlite'));
    const DatabaseSync = m.DatabaseSync as new (p: string) => NativeDb;
    if (typeof DatabaseSync !== 'function') return undefined;
    return { engine: 'node', open: (p) => new DatabaseSync(p) };
  } catch {
    return undefined;
  }
}

export async function nativeAvailable(): Promise<boolean> {
  return (await loadNative()) !== undefined;
}

class NativeDatabase implements SqliteDatabase {
  readonly adapter = 'native' as const;
  readonly capabilities: SqliteCapabilities;
  private readonly tx: TxRunner;
  private readonly cache = new Map<string, NativeStatement>();

  constructor(
    private readonly db: NativeDb,
    readonly engine: Engine,
  ) {
    this.tx = new TxRunner((sql) => void this.db.exec(sql));
    this.capabilities = { fts: probeFts((sql) => this.db.prepare(sql).get() ?? undefined) };
  }

  exec(sql: string): void {
    this.db.exec(sql);
  }

  prepare(sql: string): Statement {
    const s = this.statement(sql);
    const args = (raw: BindParams): unknown[] => {
      // Same strings as the journalled adapter stores (shared.ts wellFormedParams), whichever engine binds them.
      const params = wellFormedParams(raw);
      if (this.engine === 'node') return params; // node:sqlite takes bare or prefixed names natively
      const { named, positional } = splitParams(params);
      return named ? [named, ...positional] : positional;
    };
    return {
      run: (...params): RunResult => {
        const r = s.run(...args(params));
        return { changes: Number(r?.changes ?? 0), lastInsertRowid: r?.lastInsertRowid ?? 0 };
      },
      get: (...params) => s.get(...args(params)) ?? undefined,
      all: (...params) => s.all(...args(params)),
      iterate: (...params) => (s.iterate ? s.iterate(...args(params)) : s.all(...args(params))[Symbol.iterator]()),
    };
  }

  /**
   * Compiled statements by SQL text, least recently used evicted (as in the journalled adapter): stores call
   * prepare() per operation, and compiling an FTS query costs about as much as running it at 10k entries.
   * SQLite re-prepares a cached statement by itself after a schema change.
   */
  private statement(sql: string): NativeStatement {
    let s = this.cache.get(sql);
    if (s) this.cache.delete(sql);
    else {
      s = this.db.prepare(sql);
      if (this.cache.size >= STATEMENT_CACHE) this.cache.delete(this.cache.keys().next().value as string);
    }
    this.cache.set(sql, s);
    return s;
  }

  transaction<T>(fn: () => T): T {
    return this.tx.run(fn);
  }

  close(): void {
    this.cache.clear();
    this.db.close();
  }
}

/** Opens a file-backed (or ':memory:') native database; throws 'sqlite.native_unavailable' when there is none. */
export async function openNative(path = ':memory:', pageSize?: number): Promise<SqliteDatabase> {
  const native = await loadNative();
  if (!native) {
    throw new ClawError('sqlite.native_unavailable', `no native SQLite in this runtime (node:sqlite needs Node >= 22.5, or Bun); use adapter 'sqljs'`);
  }
  const db = native.open(path);
  if (path !== ':memory:') {
    // Takes effect on a new (empty) file only, and must come before WAL mode is set.
    if (pageSize !== undefined) db.exec(`PRAGMA page_size=${Math.floor(pageSize)}`);
    // WAL + synchronous=FULL: a committed transaction survives power loss, and readers don't block the writer.
    db.exec('PRAGMA journal_mode=WAL');
    db.exec('PRAGMA synchronous=FULL');
  }
  return new NativeDatabase(db, native.engine);
}

export type { SqlValue };
