#!/usr/bin/env node
// What each package and source folder contributes to dist/ (minified bytes), largest first, built exactly as
// `npm run build` builds it (build.config.mjs) into .build/size-report/: the start-up file first (read and compiled
// at every start), then the other chunk files (docs/startup.md), each with its own breakdown.
// Usage: node scripts/size-report.mjs
import { bundle } from '../build.config.mjs';

const r = await bundle({ outfile: '.build/size-report/claw.mjs' });
const kb = (n) => `${(n / 1024).toFixed(1)} KB`.padStart(9);
const byFolder = (inputs) => {
  const groups = {};
  for (const [path, v] of Object.entries(inputs)) {
    const f = path.includes('node_modules/') ? path.slice(path.indexOf('node_modules/')) : path;
    const parts = f.split('/');
    const g = f.startsWith('node_modules') ? parts.slice(0, parts[1].startsWith('@') ? 3 : 2).join('/') : parts.slice(0, 2).join('/');
    groups[g] = (groups[g] ?? 0) + v.bytesInOutput;
  }
  return Object.entries(groups).sort((a, b) => b[1] - a[1]);
};
console.log(`JavaScript ${kb(r.js.raw)} raw, ${kb(r.js.gzip)} gzip; start-up ${kb(r.startup)}; wasm ${kb(r.wasm.raw)}; dist/ ${kb(r.total.raw)} raw, ${kb(r.total.gzip)} gzip`);
const all = {};
for (const f of r.chunks.files) Object.assign(all, f.inputs);
console.log('\nall chunk files:');
for (const [g, b] of byFolder(all)) console.log(`  ${kb(b)}  ${g}`);
for (const f of [...r.chunks.files].sort((a, b) => (a === r.chunks.files[0] ? -1 : b === r.chunks.files[0] ? 1 : b.bytes - a.bytes))) {
  console.log(`\n${f.file}: ${kb(f.bytes)}, ${f.chunks.length} chunk(s)`);
  for (const [g, b] of byFolder(f.inputs)) console.log(`  ${kb(b)}  ${g}`);
}
