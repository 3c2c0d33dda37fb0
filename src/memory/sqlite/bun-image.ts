// bun:sqlite as the engine of the journalled adapter (./image-db.ts): an in-memory bun:sqlite database loaded from
// the snapshot image (Database.deserialize) and exported for snapshots (serialize()). Same SQLite image, same
// journal as sql.js, so the flash writes stay those of the journal (docs/memory.md "Choosing the adapter") while
// the engine is native: no WebAssembly to compile at start and none held by V8 (BENCH.md "Bun").
//
// It implements the slice of sql.js's statement API image-db.ts uses, on top of bun:sqlite's statements:
// stepping is bun's row iterator (one sqlite3_step per next()), and parameters are bound as sql.js binds them.
// Imported through a variable so bundlers leave 'bun:sqlite' alone; on Node this module is never loaded.
import type { ImageDb, ImageStatement } from './image-db.ts';
import { isBun } from './shared.ts';
import type { SqlValue } from './types.ts';

interface BunStatement {
  iterate(...params: unknown[]): IterableIterator<Record<string, SqlValue>>;
  readonly columnNames: string[];
  readonly paramsCount: number;
  finalize(): void;
}
interface BunDatabase {
  exec(sql: string): unknown;
  prepare(sql: string): BunStatement;
  serialize(): Uint8Array;
  close(): void;
}
interface BunDatabaseClass {
  new (path: string): BunDatabase;
  deserialize?(image: Uint8Array): BunDatabase;
}

let loading: Promise<BunDatabaseClass | undefined> | undefined;

/** bun:sqlite's Database when it can hold an image (Bun with serialize/deserialize and row iterators), else undefined. */
export function loadBunImageEngine(): Promise<BunDatabaseClass | undefined> {
  loading ??= (async () => {
    if (!isBun()) return undefined;
    const spec = 'bun:sqlite';
    try {
      const m = (await import(spec)) as { Database?: BunDatabaseClass };
      const D = m.Database;
      if (typeof D?.deserialize !== 'function' || typeof D.prototype?.serialize !== 'function') return undefined;
      return D;
    } catch {
      return undefined;
    }
  })();
  return loading;
}

class BunImageStatement implements ImageStatement {
  private params: unknown[] = [];
  private rows?: IterableIterator<Record<string, SqlValue>>;
  private row?: Record<string, SqlValue>;
  /** The column names of the current run, read once per run (bun builds the array on every access). */
  private names?: string[];

  constructor(private readonly s: BunStatement) {}

  bind(values?: SqlValue[] | Record<string, SqlValue>): boolean {
    this.reset();
    if (Array.isArray(values)) {
      // sql.js leaves parameters past the values given NULL; bun:sqlite wants exactly paramsCount of them.
      const padded: unknown[] = values.slice();
      while (padded.length < this.s.paramsCount) padded.push(null);
      this.params = padded;
    } else {
      // Names carry their prefix (shared.ts splitParams); bun without `strict` binds them so and leaves
      // parameters the object does not name NULL, as sql.js does.
      this.params = values === undefined ? [] : [values];
    }
    return true;
  }

  step(): boolean {
    this.rows ??= this.s.iterate(...(this.params.length > 0 ? this.params : new Array<null>(this.s.paramsCount).fill(null)));
    const r = this.rows.next();
    this.row = r.done ? undefined : r.value;
    return !r.done;
  }

  get(): SqlValue[] {
    const row = this.row;
    if (row === undefined) return [];
    return this.getColumnNames().map((n) => row[n]);
  }

  getColumnNames(): string[] {
    return (this.names ??= this.s.columnNames);
  }

  /** Ends the current run (bun resets the statement when its iterator is closed) and, as in sql.js, the bindings. */
  reset(): boolean {
    const rows = this.rows;
    this.rows = undefined;
    this.row = undefined;
    this.names = undefined;
    this.params = [];
    rows?.return?.();
    return true;
  }

  free(): boolean {
    this.reset();
    this.s.finalize();
    return true;
  }
}

class BunImageDb implements ImageDb {
  private changes?: BunImageStatement;

  constructor(private readonly db: BunDatabase) {}

  exec(sql: string): unknown {
    return this.db.exec(sql);
  }

  run(sql: string): unknown {
    return this.db.exec(sql);
  }

  prepare(sql: string): ImageStatement {
    return new BunImageStatement(this.db.prepare(sql));
  }

  export(): Uint8Array {
    return this.db.serialize();
  }

  close(): void {
    this.changes?.free();
    this.db.close();
  }

  getRowsModified(): number {
    const s = (this.changes ??= new BunImageStatement(this.db.prepare('SELECT changes() AS n')));
    s.step();
    const n = Number(s.get()[0]);
    s.reset();
    return n;
  }
}

/** Opens an in-memory bun:sqlite database, empty or from a SQLite image; undefined where bun:sqlite cannot. */
export async function openBunImageRaw(image?: Uint8Array): Promise<ImageDb | undefined> {
  const D = await loadBunImageEngine();
  if (!D) return undefined;
  return new BunImageDb(image ? D.deserialize!(image) : new D(':memory:'));
}
