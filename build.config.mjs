#!/usr/bin/env node
// Builds what ships in dist/ (docs/startup.md) and enforces the size budget (docs/size-budget.md):
//   dist/claw.mjs        the loader (targets/boot.ts), a small ES module: `claw` runs this file;
//   dist/chunks/*.js     the runtime, split by esbuild at every import() (scripts/build/chunks.mjs), each chunk
//                        compiled by the loader with vm.Script and a V8 code cache when first required;
//   dist/sql-wasm.wasm   sql.js's WebAssembly, read only when a manifest declares memory.
// Prints the raw and gzip size of the JS, the wasm and the whole of dist/, and fails over budget.
import { build } from 'esbuild';
import { readFileSync, chmodSync, mkdirSync, copyFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import { buildChunks } from './scripts/build/chunks.mjs';

/**
 * Budgets (docs/size-budget.md). BUDGET_BYTES: the JavaScript every start reads and compiles (the loader and the
 * start-up file), raw: parse and compile time is what size costs at start. DIST_BUDGET: what users download
 * (gzip of the whole of dist/) and store (raw bytes of dist/, JS and wasm).
 */
export const BUDGET_BYTES = 400 * 1024;
export const DIST_BUDGET = { gzip: 660 * 1024, raw: 1660 * 1024 };

// Slim mqtt.js for a Node/Bun TCP/TLS client (measured in docs/size-budget.md; loaded lazily by
// src/transports/mqtt/load.ts, which imports the client class alone, so ws/socks/browser transports never enter).
// readable-stream is a userland copy of node:stream; debug logging is a no-op (we log through our logger);
// worker-timers is browser-only; lru-cache (topic aliases only) becomes a small Map.
export const ALIASES = {
  'readable-stream': 'node:stream',
  debug: './src/transports/mqtt/stubs/debug.cjs',
  'worker-timers': './src/transports/mqtt/stubs/worker-timers.cjs',
  'lru-cache': './src/transports/mqtt/stubs/lru-cache.cjs',
};
const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));
const CHUNK_DIR = 'chunks';

/** esbuild options shared by the runtime's chunks and the loader. */
export function esbuildOptions({ minify = true } = {}) {
  return {
    bundle: true,
    // minify: false keeps identifiers (readable profiles) but still drops comments and whitespace.
    ...(minify ? { minify: true } : { minifyWhitespace: true, minifySyntax: false, minifyIdentifiers: false }),
    platform: 'node',
    target: ['node18'],
    // esbuild's table has Node without \p{…} property escapes, so it rewrote valibot's unused EMOJI_REGEX literal
    // as `new RegExp(…)`: a call it cannot drop, which parsed a large Unicode pattern on every start (0.17 ms).
    // Node 18+, Bun and every V8/JSC we target have them (checked on Node 18, 20, 22 and Bun).
    supported: { 'regexp-unicode-property-escapes': true },
    legalComments: 'none',
    define: { __CLAW_VERSION__: JSON.stringify(pkg.version), __CLAW_CHUNK_DIR__: JSON.stringify(`./${CHUNK_DIR}`) },
    alias: ALIASES,
    logLevel: 'warning',
  };
}

export async function bundle({ entry = 'targets/node.ts', outfile = 'dist/claw.mjs', minify = true } = {}) {
  const outdir = dirname(resolve(outfile));
  mkdirSync(outdir, { recursive: true });
  const options = esbuildOptions({ minify });
  const chunks = await buildChunks(options, { entry, outdir: join(outdir, CHUNK_DIR) });
  await build({
    ...options,
    entryPoints: ['targets/boot.ts'],
    outfile,
    format: 'esm',
    banner: { js: '#!/usr/bin/env node' },
    define: { ...options.define, __CLAW_ENTRY__: JSON.stringify(chunks.entry), __CLAW_FILES__: JSON.stringify(chunks.fileOf) },
  });
  chmodSync(outfile, 0o755);
  // sql.js's WebAssembly ships beside the loader (docs/memory.md: measured against embedding it as base64); the
  // runtime finds it relative to the loader's URL.
  const wasm = join(outdir, 'sql-wasm.wasm');
  copyFileSync(createRequire(import.meta.url).resolve('sql.js/dist/sql-wasm.wasm'), wasm);
  const startFile = readFileSync(join(outdir, CHUNK_DIR, chunks.fileOf[chunks.entry]));
  const js = [readFileSync(outfile), ...readdirSync(join(outdir, CHUNK_DIR)).map((f) => readFileSync(join(outdir, CHUNK_DIR, f)))];
  const jsAll = Buffer.concat(js);
  const wasmBytes = readFileSync(wasm);
  const gz = (b) => gzipSync(b, { level: 9 }).length;
  return {
    outfile,
    chunks,
    loader: js[0].length,
    startup: js[0].length + startFile.length,
    js: { raw: jsAll.length, gzip: gz(jsAll) },
    wasm: { raw: wasmBytes.length, gzip: gz(wasmBytes) },
    // A tarball of dist/ compresses across files; gzip of the concatenation is that, to within its headers.
    total: { raw: jsAll.length + wasmBytes.length, gzip: gz(Buffer.concat([jsAll, wasmBytes])) },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
  const out = process.argv.find((a) => a.startsWith('--out='))?.slice(6);
  const r = await bundle(out ? { outfile: out } : {});
  console.log(`loader dist/claw.mjs ${kb(r.loader)}; ${r.chunks.files.length} chunk files in dist/chunks/ (the first is loaded at every start):`);
  for (const f of r.chunks.files) console.log(`  ${f.file.padEnd(30)} ${kb(f.bytes).padStart(9)}  ${f.chunks.length} chunks`);
  const line = (label, s) => console.log(`${label.padEnd(22)} ${kb(s.raw).padStart(9)} raw ${kb(s.gzip).padStart(9)} gzip`);
  line('dist/ JavaScript', r.js);
  line('dist/sql-wasm.wasm', r.wasm);
  line('dist/ total', r.total);
  console.log(`start-up JavaScript (loader + start-up file): ${kb(r.startup)} raw`);
  console.log(`budgets (docs/size-budget.md): start-up JavaScript ${kb(BUDGET_BYTES)} raw; dist/ ${kb(DIST_BUDGET.gzip)} gzip, ${kb(DIST_BUDGET.raw)} raw`);
  const over = [
    [r.startup, BUDGET_BYTES, 'start-up JavaScript (raw)'],
    [r.total.gzip, DIST_BUDGET.gzip, 'dist/ (gzip)'],
    [r.total.raw, DIST_BUDGET.raw, 'dist/ (raw)'],
  ].filter(([size, budget]) => size > budget);
  for (const [size, budget, what] of over) console.error(`size budget exceeded: ${what} by ${kb(size - budget)}: see docs/size-budget.md`);
  if (over.length) process.exit(1);
}
