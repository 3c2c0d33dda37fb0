// Picks the adapter. 'auto' prefers the runtime's native SQLite (no WASM to load, FTS5, its own durability),
// and falls back to sql.js, which runs everywhere.
import { existsSync } from 'node:fs';
import { ClawError } from '../../protocol/errors.ts';
import type { DurableDatabase } from './durable.ts';
import type { OpenOptions, SqliteDatabase } from './types.ts';

export async function openDatabase(opts: OpenOptions = {}): Promise<SqliteDatabase> {
  const path = opts.path ?? ':memory:';
  let adapter = opts.adapter ?? 'auto';
  if (adapter === 'auto') {
    // A database already kept in the sql.js layout stays with sql.js: the native engine would not see the
    // writes still in its journal (e.g. after upgrading Node 20 → 22 on a board).
    const sqljsLayout = path !== ':memory:' && existsSync(`${path}.claw-journal`);
    const { nativeAvailable } = await import('./native.ts');
    adapter = !sqljsLayout && (await nativeAvailable()) ? 'native' : 'sqljs';
  }
  if (adapter === 'native') {
    const { openNative } = await import('./native.ts');
    return openNative(path, opts.pageSize);
  }
  if (adapter !== 'sqljs') throw new ClawError('sqlite.adapter', `unknown SQLite adapter '${String(adapter)}'`);
  // Lazy: neither the sql.js glue nor the wasm is touched until a database is opened.
  if (path === ':memory:') {
    const { openSqlJsRaw, SqlJsDatabase } = await import('./sqljs.ts');
    return new SqlJsDatabase(await openSqlJsRaw({ wasmPath: opts.wasmPath }));
  }
  const { openDurable } = await import('./durable.ts');
  return openDurable(path, opts.durability, opts.wasmPath);
}

export type { DurableDatabase };
