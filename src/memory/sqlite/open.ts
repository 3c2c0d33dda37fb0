// Picks the adapter. 'auto' with `autoPrefers: 'native'` (the default) uses the runtime's native SQLite when it has
// one (no WASM to load, FTS5, its own durability), else the journalled adapter; a path already in the journalled
// layout stays journalled. With `autoPrefers: 'journal'` (the memory service's choice) 'auto' keeps a database
// *file* on the journalled path even where a native engine exists (on Bun held by bun:sqlite in memory, else by
// sql.js): a native commit writes whole pages to the WAL and again at checkpoint (100–200× the payload per single
// write), our journal ~2× on average — on an SD card that is the wear. Native then only for `:memory:` and for a
// file the native engine already made (a plain SQLite file without our journal, which may have a -wal the image
// engines would not see).
// docs/memory.md "Choosing the adapter".
import { existsSync, closeSync, openSync, readSync } from 'node:fs';
import { ClawError } from '../../protocol/errors.ts';
import type { DurableDatabase } from './durable.ts';
import type { OpenOptions, SqliteDatabase } from './types.ts';

/** A plain SQLite file (the native engine's layout): the SQLite header magic and no journal of ours beside it. */
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
  // Asked for by name, `sqljs` means the sql.js engine too; chosen by 'auto', the journalled layout may be held
  // by bun:sqlite where the runtime has it (durable.ts EngineChoice).
  const engine = adapter === 'auto' ? 'auto' : 'sql.js';
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
    // Only reached where no native engine exists, or by name: sql.js.
    const [{ openSqlJsRaw }, { ImageDatabase }] = await Promise.all([import('./sqljs.ts'), import('./image-db.ts')]);
    return new ImageDatabase(await openSqlJsRaw({ wasmPath: opts.wasmPath }), 'sql.js');
  }
  const { openDurable } = await import('./durable.ts');
  return openDurable(path, opts.durability, opts.wasmPath, engine);
}

export type { DurableDatabase };
