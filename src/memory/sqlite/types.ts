// The one database interface the memory capability talks to. Its shape is the subset of node:sqlite's
// DatabaseSync that Bun's bun:sqlite and sql.js can also honour, so the store code is written once and the
// adapter (native file-backed SQLite, or an in-memory image — sql.js, or bun:sqlite on Bun — with our own journal)
// is a deployment detail.

/** A value SQLite can bind or return. Integers come back as `number` (as node:sqlite does by default). */
export type SqlValue = null | number | bigint | string | Uint8Array;

/**
 * Parameters as node:sqlite takes them: positional values (`?`, `?NNN`), or one object of named values first
 * (`:name`, `$name`, `@name`; the key may be written with or without its prefix).
 */
export type BindParams = SqlValue[] | [Record<string, SqlValue>, ...SqlValue[]];

export type Row = Record<string, SqlValue>;

export interface RunResult {
  changes: number;
  lastInsertRowid: number | bigint;
}

export interface Statement {
  run(...params: BindParams): RunResult;
  /** First row, or `undefined` when there is none (node:sqlite semantics; Bun's `null` is normalised). */
  get(...params: BindParams): Row | undefined;
  all(...params: BindParams): Row[];
  /**
   * The rows one at a time (node:sqlite's `iterate()`): a caller that keeps a few of many rows (a top-k) lets the
   * rest die young instead of holding them all — a long-lived row array survives V8's young-generation
   * collections and makes V8 grow that generation, peak RSS that stays. Finish or
   * break the loop before running this same statement again.
   */
  iterate(...params: BindParams): IterableIterator<Row>;
}

/** Which full-text engine the adapter's SQLite has. sql.js 1.16 ships FTS3/FTS4 only; node:sqlite and Bun ship FTS5. */
export type FtsCapability = 'fts5' | 'fts4' | 'none';

export interface SqliteCapabilities {
  fts: FtsCapability;
}

export type AdapterName = 'sqljs' | 'native';

export interface SqliteDatabase {
  readonly adapter: AdapterName;
  /** Which SQLite runs the statements (logged at `memory open`): 'sql.js' or 'bun:sqlite' journalled, 'node' or 'bun' native. */
  readonly engine?: string;
  readonly capabilities: SqliteCapabilities;
  /** Runs one or more statements without parameters and without results (DDL, pragmas). */
  exec(sql: string): void;
  prepare(sql: string): Statement;
  /**
   * Runs `fn` inside a transaction and returns its result; commits when it returns, rolls back when it throws.
   * Nested calls become savepoints. With the journalled adapter the commit is acknowledged only after the journal
   * record is on disk (fsync), so a returned value means "durable". Must not be async: the work inside must be
   * synchronous, as every statement method is.
   */
  transaction<T>(fn: () => T): T;
  close(): void;
}

export interface OpenOptions {
  /** Database file; `':memory:'` (the default) keeps nothing on disk. */
  path?: string;
  /**
   * `'auto'` (default): native when the runtime has node:sqlite or bun:sqlite, else journalled (see `autoPrefers`).
   * `'sqljs'` is the journalled adapter held by sql.js; chosen by `'auto'`, Bun holds it in bun:sqlite instead.
   */
  adapter?: AdapterName | 'auto';
  /**
   * What `'auto'` prefers for a database file: `'native'` (default) the runtime's engine when there is one;
   * `'journal'` the journalled adapter unless the file is already a native one (bytes written per entry on flash:
   * open.ts, docs/memory.md). `:memory:` takes native either way.
   */
  autoPrefers?: 'native' | 'journal';
  /** sql.js only: where `sql-wasm.wasm` lives (default: beside the bundle, else from node_modules/sql.js/dist). */
  wasmPath?: string;
  /**
   * native only: page size of a database file created now (SQLite's default 4096). Smaller pages write fewer
   * bytes per commit to the WAL (1024 → 3–7× fewer) at some cost in full-text latency.
   */
  pageSize?: number;
  /** journalled only: journal and snapshot policy, fs injection (see durable.ts). */
  durability?: import('./durable.ts').DurabilityOptions;
}
