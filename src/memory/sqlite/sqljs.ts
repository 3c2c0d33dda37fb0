// sql.js, the engine of the journalled adapter everywhere bun:sqlite is not (./image-db.ts): SQLite compiled to
// WebAssembly, so it runs on every Node >= 18 and Bun with no native addon.
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
import type { ImageDb } from './image-db.ts';

interface SqlJsStatic {
  Database: new (data?: Uint8Array | null) => ImageDb;
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
    // The same call makes the one TextDecoder that turns every TEXT value read into a JS string; by default it
    // strips a leading U+FEFF, so content "\ufeffx" was stored and read back as "x" (and a key "\ufeff" as "").
    const g = globalThis as Record<string, unknown>;
    const shim = !('__dirname' in g);
    if (shim) g.__dirname = dirname(path);
    const Decoder = g.TextDecoder as typeof TextDecoder;
    g.TextDecoder = class extends Decoder {
      constructor(label?: string, o?: ConstructorParameters<typeof TextDecoder>[1]) {
        super(label, { ignoreBOM: true, ...o });
      }
    };
    try {
      let started: Promise<SqlJsStatic>;
      try {
        started = init({ wasmBinary });
      } finally {
        // Made synchronously: nothing else in the process gets the patched class.
        g.TextDecoder = Decoder;
      }
      return await started;
    } finally {
      if (shim) delete g.__dirname;
    }
  })().catch((e) => {
    loading = undefined;
    throw e;
  });
  return loading;
}

/** Opens an in-memory sql.js database, empty or from a SQLite image. */
export async function openSqlJsRaw(opts: { wasmPath?: string; image?: Uint8Array } = {}): Promise<ImageDb> {
  const SQL = await loadSqlJs(opts.wasmPath);
  return new SQL.Database(opts.image ?? null);
}
