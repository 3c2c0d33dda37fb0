#!/usr/bin/env node
// What each package and source folder contributes to claw.mjs (minified bytes), largest first, built exactly as
// `npm run build` builds it (build.config.mjs) into .build/size-report/. With the cold-code build
// (scripts/build/cold.mjs) the hot part is listed as it sits in the file, and each cold group with its
// minified size, its brotli size and what it costs in the file (base64), then its own breakdown.
// Usage: node scripts/size-report.mjs [--cold | --no-cold]   (default: what `npm run build` does)
import { bundle } from '../build.config.mjs';

const cold = process.argv.includes('--cold') ? true : process.argv.includes('--no-cold') ? false : undefined;
const r = await bundle({ outfile: '.build/size-report/claw.mjs', ...(cold === undefined ? {} : { cold }) });
const kb = (n) => `${(n / 1024).toFixed(1)} KB`.padStart(9);
const byFolder = (inputs) => {
  const groups = {};
  for (const [f, v] of Object.entries(inputs)) {
    const parts = f.split('/');
    const g = f.startsWith('node_modules') ? parts.slice(0, parts[1].startsWith('@') ? 3 : 2).join('/') : f.startsWith('claw-cold:') ? 'cold-code loader + payload' : parts.slice(0, 2).join('/');
    groups[g] = (groups[g] ?? 0) + v.bytesInOutput;
  }
  return Object.entries(groups).sort((a, b) => b[1] - a[1]);
};
console.log(`total ${kb(r.raw)} raw, ${kb(r.gzip)} gzip`);
if (r.split) console.log(`hot code ${kb(r.split.hotBytes)}, cold payload ${kb(r.split.payloadBytes)} (base64 of brotli)${r.boot ? `, boot loader ${kb(r.boot.loaderBytes)} (docs/startup.md)` : ''}`);
for (const [g, b] of byFolder(r.inputs)) console.log(`${kb(b)}  ${g}`);
for (const g of r.split?.groups ?? []) {
  console.log(`\ncold group ${g.group}: ${g.modules} modules, ${kb(g.raw)} minified -> ${kb(g.compressed)} brotli -> ${kb(g.base64)} in the file`);
  console.log(`  entries: ${g.targets.join(', ')}`);
  for (const [f, b] of byFolder(g.inputs)) console.log(`  ${kb(b)}  ${f}`);
}
