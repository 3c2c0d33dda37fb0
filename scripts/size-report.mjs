#!/usr/bin/env node
// What each package and source folder contributes to dist/claw.mjs (minified bytes), largest first.
import { build } from 'esbuild';
import { ALIASES } from '../build.config.mjs';

const r = await build({
  entryPoints: ['targets/node.ts'],
  bundle: true,
  minify: true,
  platform: 'node',
  format: 'esm',
  target: ['node18'],
  write: false,
  metafile: true,
  outfile: 'size-report.mjs',
  define: { __CLAW_VERSION__: '"0"' },
  alias: ALIASES,
  logLevel: 'warning',
});
const out = Object.values(r.metafile.outputs)[0];
const groups = {};
for (const [f, v] of Object.entries(out.inputs)) {
  const parts = f.split('/');
  const g = f.startsWith('node_modules') ? parts.slice(0, parts[1].startsWith('@') ? 3 : 2).join('/') : parts.slice(0, 2).join('/');
  groups[g] = (groups[g] ?? 0) + v.bytesInOutput;
}
const kb = (n) => `${(n / 1024).toFixed(1)} KB`.padStart(9);
console.log(`total ${kb(out.bytes)}`);
for (const [g, b] of Object.entries(groups).sort((a, b) => b[1] - a[1])) console.log(`${kb(b)}  ${g}`);
