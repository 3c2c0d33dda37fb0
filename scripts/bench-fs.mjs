#!/usr/bin/env node
// Filesystem transport round trip (docs/transports.md): `claw run --listen fs:DIR` as a daemon,
// sequential `claw.status` requests through the fs client (src/transports/fs/client-fs.ts, bundled
// on the fly), p50/p99 per variant. Floor: a bare Node process doing the same file dance (watch the
// inbox, rename the request out, read it, write the reply as .tmp + rename) without the runtime.
//
//   watch            defaults: fs.watch (inotify) + 250 ms poll safety net (process-crash safe)
//   watch, fsync     fsync: true, power-loss safe (claims and stored answers fsynced, directories too)
//   poll 250 ms      watch: false on both sides, the default interval (filesystems that do not notify)
//   poll 20 ms       watch: false, a short interval
//
// Usage: node scripts/bench-fs.mjs [--n=200] [--poll-n=40] [--json] [--claw=dist/claw.mjs]
import { build } from 'esbuild';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { ROOT, DEFAULT_CLAW, sleep, quantile, median, f1, f2, summaryHead } from './bench/lib.mjs';

const arg = (k, d) => {
  const a = process.argv.find((x) => x.startsWith(`--${k}=`));
  return a ? a.slice(k.length + 3) : d;
};
const N = Number(arg('n', 200));
const POLL_N = Number(arg('poll-n', 40));
const CLAW = arg('claw', DEFAULT_CLAW);
const JSON_OUT = process.argv.includes('--json');
const log = (s) => process.stderr.write(`${s}\n`);

const work = mkdtempSync(join(tmpdir(), 'claw-bench-fs-'));
const children = new Set();
const cleanup = () => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(work, { recursive: true, force: true });
};
process.on('exit', cleanup);
process.on('SIGINT', () => process.exit(130));

// The client as the runtime ships it, bundled from source.
await build({ entryPoints: [join(ROOT, 'src/transports/fs/client-fs.ts')], bundle: true, platform: 'node', format: 'esm', outfile: join(work, 'client.mjs'), logLevel: 'error' });
const { connectFsClient } = await import(pathToFileURL(join(work, 'client.mjs')).href);

const INIT = {
  protocolVersion: '0.3.0',
  clientInfo: { name: 'bench-fs', version: '1' },
  manifest: { kind: 'Claw', metadata: { name: 'x' }, spec: { identity: { inline: { personality: 'p' } }, providers: [{ inline: { protocol: 'openai-compatible', endpoint: 'http://localhost:1/v1', model: 'm', auth: { type: 'none' } } }] } },
  capabilities: {},
};

const BARE = `
const fs = require('node:fs');
const d = process.argv[1];
for (const s of ['inbox', 'outbox']) fs.mkdirSync(d + '/' + s, { recursive: true });
const scan = () => {
  for (const n of fs.readdirSync(d + '/inbox').sort()) {
    if (n.endsWith('.tmp')) continue;
    const p = d + '/claimed-' + n;
    try { fs.renameSync(d + '/inbox/' + n, p); } catch { continue; }
    const m = JSON.parse(fs.readFileSync(p, 'utf8'));
    const rid = n.slice(n.indexOf('-') + 1, -5);
    const out = d + '/outbox/' + String(process.hrtime.bigint()).padStart(19, '0') + '-' + rid + '.json';
    fs.writeFileSync(out + '.tmp', JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { state: 'READY' } }));
    fs.renameSync(out + '.tmp', out);
    fs.unlinkSync(p);
  }
};
fs.watch(d + '/inbox', () => setImmediate(scan));
setInterval(scan, 250);
`;

async function variant(label, { bare = false, query = '', clientQuery = '', n = N }) {
  const dir = join(work, label.replace(/\W+/g, '-'));
  const ipc = join(dir, 'ipc');
  let child;
  if (bare) {
    child = spawn(process.execPath, ['-e', BARE, ipc], { stdio: ['ignore', 'ignore', 'inherit'] });
  } else {
    cpSync(join(ROOT, 'examples/minimal/claw.yaml'), join(dir, 'claw.yaml'));
    child = spawn(process.execPath, [CLAW, 'run', join(dir, 'claw.yaml'), '--listen', `fs:${ipc}${query}`], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'ignore'],
      env: { PATH: process.env.PATH ?? '' },
    });
  }
  children.add(child);
  while (!existsSync(join(ipc, 'inbox'))) await sleep(5);
  const client = await connectFsClient(`fs:${ipc}${clientQuery}`, { baseDir: dir });
  const call = (method, params) => client.request({ jsonrpc: '2.0', id: 1, method, ...(params ? { params } : {}) }, { timeoutMs: 10_000 });
  if (!bare) {
    const init = await call('claw.initialize', INIT);
    if (!init.result) throw new Error(`initialize failed: ${JSON.stringify(init)}`);
  }
  for (let i = 0; i < Math.min(20, n); i++) await call('claw.status');
  const ms = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = await call('claw.status');
    ms.push(performance.now() - t0);
    if (!r.result) throw new Error(`status failed: ${JSON.stringify(r)}`);
  }
  await client.close();
  child.kill('SIGTERM');
  children.delete(child);
  const row = { label, n, p50: median(ms), p90: quantile(ms, 0.9), p99: quantile(ms, 0.99), max: Math.max(...ms) };
  log(`${label.padEnd(28)} n=${n}  p50 ${f2(row.p50)} ms  p90 ${f2(row.p90)}  p99 ${f2(row.p99)}  max ${f1(row.max)}`);
  return row;
}

const rows = [];
rows.push(await variant('bare fs echo (watch)', { bare: true }));
rows.push(await variant('claw, watch (defaults)', {}));
rows.push(await variant('claw, watch, fsync: true', { query: '?fsync=true' }));
rows.push(await variant('claw, poll 250 ms', { query: '?watch=false', clientQuery: '?watch=false', n: POLL_N }));
rows.push(await variant('claw, poll 20 ms', { query: '?watch=false&poll_interval_ms=20', clientQuery: '?watch=false&poll_interval_ms=20', n: POLL_N * 2 }));
const summary = { ...summaryHead(), load: loadavg()[0], rows };
if (JSON_OUT) process.stdout.write(`${JSON.stringify(summary)}\n`);
else {
  console.log('\n| variant | n | p50 ms | p90 ms | p99 ms |');
  console.log('|---|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.label} | ${r.n} | ${f2(r.p50)} | ${f2(r.p90)} | ${f2(r.p99)} |`);
  console.log(`\nload ${loadavg()[0].toFixed(2)}, ${summary.node}, goal: watching p50 and p99 ≤ 20 ms`);
}
process.exit(0);
