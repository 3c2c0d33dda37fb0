#!/usr/bin/env node
// Bundles the runtime into one minified ESM file, dist/claw.mjs, and enforces the size budget.
// Budget (docs/size-budget.md): the whole runtime must stay <= 400 KB raw, MQTT and sql.js glue included;
// BUDGET_BYTES is today's limit, so growth is a deliberate decision recorded in that file.
// By default the code reachable only through import() is stored compressed inside the file and evaluated on
// first use (scripts/build/cold.mjs; BENCH.md "Bundle: cold code"), and the hot code sits in a comment that a
// small loader compiles with vm.Script and a V8 code cache (scripts/build/boot.mjs, docs/startup.md).
// `--no-code-cache` (or CLAW_BUILD_CODE_CACHE=0) builds the previous shape (one ES module, cold payloads inline);
// `--no-cold` (or CLAW_BUILD_COLD=0) the plain bundle, e.g. `node build.config.mjs --no-cold
// --out=.build/plain/claw.mjs` for an A/B bench.
import { build } from 'esbuild';
import { readFileSync, writeFileSync, chmodSync, mkdirSync, copyFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import { bundleCold } from './scripts/build/cold.mjs';
import { assembleBoot } from './scripts/build/boot.mjs';

export const BUDGET_BYTES = 400 * 1024;

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

export async function bundle({
  entry = 'targets/node.ts',
  outfile = 'dist/claw.mjs',
  minify = true,
  cold = process.env.CLAW_BUILD_COLD !== '0',
  codeCache = process.env.CLAW_BUILD_CODE_CACHE !== '0',
} = {}) {
  mkdirSync(dirname(outfile), { recursive: true });
  const options = {
    bundle: true,
    // minify: false keeps identifiers (readable profiles) but still drops comments and whitespace: the code-cache
    // build stores the hot code as ASCII, and comments carry non-ASCII characters.
    ...(minify ? { minify: true } : { minifyWhitespace: true, minifySyntax: false, minifyIdentifiers: false }),
    platform: 'node',
    format: 'esm',
    target: ['node18'],
    // esbuild's table has Node without \p{…} property escapes, so it rewrote valibot's unused EMOJI_REGEX literal
    // as `new RegExp(…)`: a call it cannot drop, which parsed a large Unicode pattern on every start (0.17 ms).
    // Node 18+, Bun and every V8/JSC we target have them (checked on Node 18, 20, 22 and Bun).
    supported: { 'regexp-unicode-property-escapes': true },
    legalComments: 'none',
    // Some dependencies (yaml's CJS build) call require('process'); give the ESM bundle a real require.
    banner: { js: "#!/usr/bin/env node\nimport{createRequire as __claw_cr}from'node:module';const require=__claw_cr(import.meta.url);" },
    define: { __CLAW_VERSION__: JSON.stringify(pkg.version) },
    alias: ALIASES,
    logLevel: 'warning',
  };
  // cold: code reachable only through import() is stored compressed and evaluated on first use
  // (scripts/build/cold.mjs; BENCH.md "Bundle: cold code").
  let boot;
  let split;
  if (cold && codeCache) {
    // The hot code as the body of a function (CommonJS: require, module, exports are its parameters), with the
    // bundle's URL passed in as __claw_url; import() of node built-ins becomes require() (a vm.Script has no
    // module to resolve an import() against), the cold payloads stay outside it (scripts/build/boot.mjs).
    const cjs = {
      ...options,
      format: 'cjs',
      banner: undefined,
      define: { ...options.define, 'import.meta.url': '__claw_url' },
      supported: { ...options.supported, 'dynamic-import': false },
      write: false,
    };
    split = await bundleCold(cjs, { entry, outfile, externalPayloads: true });
    boot = await assembleBoot(options, split);
    writeFileSync(outfile, boot.text);
  } else if (cold) split = await bundleCold(options, { entry, outfile });
  const inputs = split ? split.hotInputs : Object.values((await build({ ...options, entryPoints: [entry], outfile, metafile: true })).metafile.outputs)[0].inputs;
  chmodSync(outfile, 0o755);
  // sql.js's WebAssembly ships beside the bundle (docs/memory.md: measured against embedding it as base64); the
  // runtime finds it relative to import.meta.url of claw.mjs. Not counted in the budget: read only when a
  // manifest declares memory.
  copyFileSync(createRequire(import.meta.url).resolve('sql.js/dist/sql-wasm.wasm'), join(dirname(resolve(outfile)), 'sql-wasm.wasm'));
  const raw = readFileSync(outfile);
  return { outfile, raw: raw.length, gzip: gzipSync(raw).length, inputs, split, boot };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
  const out = process.argv.find((a) => a.startsWith('--out='))?.slice(6);
  const r = await bundle({
    ...(process.argv.includes('--no-cold') ? { cold: false } : {}),
    ...(process.argv.includes('--no-code-cache') ? { codeCache: false } : {}),
    ...(out ? { outfile: out } : {}),
  });
  if (r.split) {
    for (const g of r.split.groups) console.log(`cold group ${g.group}: ${g.modules} modules, ${kb(g.raw)} -> ${kb(g.compressed)} brotli, ${kb(g.base64)} base64 [${g.targets.join(', ')}]`);
    console.log(`hot code ${kb(r.split.hotBytes)}, cold payload ${kb(r.split.payloadBytes)}, registry ${r.split.registry.length} modules`);
  }
  if (r.boot) console.log(`boot loader ${kb(r.boot.loaderBytes)}, build id ${r.boot.id} (hot code compiled with a V8 code cache: docs/startup.md)`);
  if (r.boot?.escaped) console.warn(`note: the hot code contains "*/" (stored escaped: every start copies the hot code once to undo it; see scripts/build/boot.mjs)`);
  console.log(`${r.outfile}: ${kb(r.raw)} raw, ${kb(r.gzip)} gzip (budget ${kb(BUDGET_BYTES)} raw)`);
  // The budget is the shipped (cold) build's; the plain bundle is built for comparison only.
  if (r.split && r.raw > BUDGET_BYTES) {
    console.error(`size budget exceeded by ${kb(r.raw - BUDGET_BYTES)}: see docs/size-budget.md`);
    process.exit(1);
  }
}
