#!/usr/bin/env node
// Bundles the runtime into one minified ESM file, dist/claw.mjs, and enforces the size budget.
// Budget (docs/size-budget.md): the whole runtime must stay <= 400 KB raw, MQTT and sql.js glue included.
// Today's budget is tighter, so growth is a deliberate decision recorded in that file.
import { build } from 'esbuild';
import { readFileSync, chmodSync, mkdirSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

export const BUDGET_BYTES = 400 * 1024;
const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));

export async function bundle({ entry = 'targets/node.ts', outfile = 'dist/claw.mjs', minify = true } = {}) {
  mkdirSync('dist', { recursive: true });
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    minify,
    platform: 'node',
    format: 'esm',
    target: ['node18'],
    legalComments: 'none',
    // Some dependencies (yaml's CJS build) call require('process'); give the ESM bundle a real require.
    banner: { js: "#!/usr/bin/env node\nimport{createRequire as __claw_cr}from'node:module';const require=__claw_cr(import.meta.url);" },
    define: { __CLAW_VERSION__: JSON.stringify(pkg.version) },
    logLevel: 'warning',
  });
  chmodSync(outfile, 0o755);
  const raw = readFileSync(outfile);
  return { outfile, raw: raw.length, gzip: gzipSync(raw).length };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await bundle();
  const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
  console.log(`${r.outfile}: ${kb(r.raw)} raw, ${kb(r.gzip)} gzip (budget ${kb(BUDGET_BYTES)} raw)`);
  if (r.raw > BUDGET_BYTES) {
    console.error(`size budget exceeded by ${kb(r.raw - BUDGET_BYTES)}: see docs/size-budget.md`);
    process.exit(1);
  }
}
