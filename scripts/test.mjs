#!/usr/bin/env node
// Compiles test/**/*.test.ts with esbuild (one bundle per file, packages kept external)
// into .build/test and runs them with uvu. Usage: node scripts/test.mjs [unit|e2e|all] [filter]
// Why a bundle step instead of a loader: it works the same on Node 18, 20, 22 and Bun.
import { build } from 'esbuild';
import { readdirSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';

const root = new URL('..', import.meta.url).pathname;
const suite = process.argv[2] ?? 'all';
const filter = process.argv[3];
const outdir = join(root, '.build', 'test');

function walk(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...walk(p));
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const dirs = suite === 'all' ? ['unit', 'e2e'] : [suite];
const entries = dirs.flatMap((d) => walk(join(root, 'test', d))).filter((f) => !filter || f.includes(filter));
if (entries.length === 0) {
  console.error(`no test files for suite "${suite}"${filter ? ` matching "${filter}"` : ''}`);
  process.exit(1);
}
rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: entries,
  outdir,
  outbase: join(root, 'test'),
  outExtension: { '.js': '.mjs' },
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node18',
  packages: 'external',
  sourcemap: 'inline',
  logLevel: 'warning',
});
const uvu = join(root, 'node_modules', 'uvu', 'bin.js');
let failed = false;
for (const d of dirs) {
  const dir = relative(root, join(outdir, d));
  const args = [uvu, dir, '.test.mjs$', '-i', 'helpers'];
  const r = spawnSync(process.execPath, ['--enable-source-maps', ...args], { stdio: 'inherit', cwd: root });
  if (r.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
