#!/usr/bin/env node
// Compiles test/**/*.test.ts with esbuild (one bundle per file, packages kept external)
// into .build/test and runs them with uvu. Usage: node scripts/test.mjs [unit|integration|e2e|all] [filter]
// Suites (docs/testing.md): unit imports sources; integration imports sources but drives real processes
// (crashed children, the sandbox runner, MCP servers, a TLS broker); e2e spawns dist/claw.mjs.
// Why a bundle step instead of a loader: it works the same on Node 18, 20, 22 and Bun.
import { build } from 'esbuild';
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';

const root = new URL('..', import.meta.url).pathname;
const suite = process.argv[2] ?? 'all';
const filter = process.argv[3];
// One build directory per run, so concurrent runs (several engineers on one machine) never clobber.
const outdir = join(root, '.build', 'test', String(process.pid));

function walk(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...walk(p));
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const SUITES = ['unit', 'integration', 'e2e'];
if (suite !== 'all' && !SUITES.includes(suite)) {
  console.error(`unknown suite "${suite}": one of ${SUITES.join(', ')}, all`);
  process.exit(1);
}
const dirs = suite === 'all' ? SUITES : [suite];
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
  // A real require, as the shipped bundle has (build.config.mjs): sources fall back to it where
  // process.getBuiltinModule is missing (Node 18, Node 20 before 20.16).
  banner: { js: "import{createRequire as __claw_cr}from'node:module';const require=__claw_cr(import.meta.url);" },
});
const uvu = join(root, 'node_modules', 'uvu', 'bin.js');
// uvu prints Total/Passed/Skipped per run; we add them up into one closing line, the plain
// "N passed, N failed" form CI reads.
const totals = { passed: 0, failed: 0, skipped: 0 };
let failed = false;

/** Runs uvu on the compiled files of one suite directory matching `pattern`, and adds up its counts. */
function runUvu(runtime, flags, dir, pattern) {
  const r = spawnSync(runtime, [...flags, uvu, dir, pattern, '-i', 'helpers'], {
    cwd: root,
    stdio: ['inherit', 'pipe', 'inherit'],
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  process.stdout.write(r.stdout ?? '');
  const text = (r.stdout ?? '').replace(/\x1b\[[0-9;]*m/g, '');
  const num = (label) => Number(new RegExp(`^\\s*${label}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0);
  // uvu's Total counts the tests it ran (skipped ones are not in it), so what did not pass failed. uvu itself
  // exits 0 when a suite's before hook throws (its runner returns from a finally block, swallowing the error,
  // and reports "(0 / N)"), so a shortfall fails the run whatever the exit code says.
  const total = num('Total');
  const notPassed = Math.max(0, total - num('Passed'));
  totals.passed += num('Passed');
  totals.skipped += num('Skipped');
  totals.failed += notPassed;
  if (r.status !== 0 || notPassed > 0) {
    failed = true;
    if (notPassed === 0) totals.failed += 1; // a run that crashed before reporting (or exited non-zero) counts as a failure
  }
}

for (const d of dirs.filter((x) => entries.some((e) => e.startsWith(join(root, 'test', x) + '/')))) {
  runUvu(process.execPath, ['--enable-source-maps'], relative(root, join(outdir, d)), '.test.mjs$');
}

// Unit files whose subject is how the runtime's own streams behave (pipe back-pressure, 'drain', partial
// reads) run a second time under Bun: Bun implements node:stream and node:child_process itself, so passing on
// Node says nothing about it (docs/testing.md "On Bun too").
const ON_BUN = ['stdio', 'mcp-hostile'];
const bun = join(root, '.build', 'runtimes', 'bun', 'node_modules', '.bin', 'bun');
const bunFiles = ON_BUN.filter((n) => entries.includes(join(root, 'test', 'unit', `${n}.test.ts`)));
if (bunFiles.length > 0) {
  if (existsSync(bun)) {
    console.log(`\nunder Bun: ${bunFiles.join(', ')}`);
    runUvu(bun, [], relative(root, join(outdir, 'unit')), `^(${bunFiles.join('|')})\\.test\\.mjs$`);
  } else {
    console.log(`\nnot run under Bun (${bun} missing: scripts/install-runtimes.sh): ${bunFiles.join(', ')}`);
    totals.skipped += bunFiles.length;
  }
}
console.log(`\ntests: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
rmSync(outdir, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
