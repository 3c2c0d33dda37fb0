// Picks the adapter. 'auto' with `autoPrefers: 'native'` (the default) uses the runtime's native SQLite when it has
// one (no WASM to load, FTS5, its own durability), else sql.js; a path already in the sql.js layout stays on sql.js.
// With `autoPrefers: 'journal'` (the memory service's choice) 'auto' keeps a database *file* on the journalled
// sql.js path even where a native engine exists: a native commit writes whole pages to the WAL and again at
// checkpoint (100–200× the payload per single write), the sql.js journal ~2× on average — on an
// SD card that is the wear. Native then only for `:memory:` and for a file the native engine already made (a
// plain SQLite file without our journal, which may have a -wal the WASM engine would not see).
// docs/memory.md "Choosing the adapter".
import { existsSync, closeSync, openSync, readSync } from 'node:fs';
import { ClawError } from '../../protocol/errors.ts';
import type { DurableDatabase } from './durable.ts';
import type { OpenOptions, SqliteDatabase } from './types.ts';

/** A plain SQLite file (the native engine's layout): the SQLite header magic and no sql.js journal beside it. */
function nativeLayout(path: string): boolean {
  if (existsSync(`${path}.claw-journal`) || !existsSync(path)) return false;
  const head = Buffer.alloc(16);
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    return readSync(fd, head, 0, 16, 0) === 16 && head.toString('latin1') === 'SQLite format 3\0';
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

export async function openDatabase(opts: OpenOptions = {}): Promise<SqliteDatabase> {
  const path = opts.path ?? ':memory:';
  let adapter = opts.adapter ?? 'auto';
  if (adapter === 'auto') {
    const { nativeAvailable } = await import('./native.ts');
    const sqljsLayout = path !== ':memory:' && existsSync(`${path}.claw-journal`);
    const wantNative = opts.autoPrefers === 'journal' ? path === ':memory:' || nativeLayout(path) : !sqljsLayout;
    adapter = wantNative && (await nativeAvailable()) ? 'native' : 'sqljs';
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
