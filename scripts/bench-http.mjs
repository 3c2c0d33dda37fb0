#!/usr/bin/env node
// HTTP transport (docs/transports.md, HTTP) against a bare node:http JSON echo in the same run, same client:
//
//   bare node:http echo (floor)  a child process whose node:http server parses each POST body as JSON and answers
//                                a claw.status-shaped reply with the request's id (no framework, no validation).
//   claw                         `dist/claw.mjs run examples/minimal/claw.yaml --listen http://127.0.0.1:0/ckp`,
//                                initialized, then `claw.status` POSTs (the whole path: limits, auth gate, router,
//                                kernel, the reply).
//
// Measured: sequential round trip (p50/p90/p99) with keep-alive (one connection) and without (a new connection per
// request); pipelined throughput (requests/s with --conc requests in flight over --sockets keep-alive connections;
// HTTP/1.1 clients do not pipeline on one socket, so in-flight requests spread over the connections); the RSS the
// HTTP listener adds (an agent initialized over stdio, stdio only, against the same with --listen http after
// --n requests over it; median of 3 pairs).
//
// Usage: node scripts/bench-http.mjs [--n=2000] [--conc=64] [--sockets=8] [--total=20000] [--json]
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOT, DEFAULT_CLAW, sleep, quantile, median, f2, summaryHead, readRssKb } from './bench/lib.mjs';

const arg = (k, d) => {
  const a = process.argv.find((x) => x.startsWith(`--${k}=`));
  return a ? Number(a.slice(k.length + 3)) : d;
};
const N = arg('n', 2000);
const CONC = arg('conc', 64);
const SOCKETS = arg('sockets', 8);
const TOTAL = arg('total', 20000);
const JSON_OUT = process.argv.includes('--json');
const CLAW = process.env.CLAW_BUNDLE ?? DEFAULT_CLAW;
const log = (s) => process.stderr.write(`${s}\n`);

const work = mkdtempSync(join(tmpdir(), 'claw-bench-http-'));
const children = new Set();
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(work, { recursive: true, force: true });
});
process.on('SIGINT', () => process.exit(130));

const INIT = {
  protocolVersion: '0.3.0',
  clientInfo: { name: 'bench-http', version: '1' },
  manifest: { kind: 'Claw', metadata: { name: 'x' }, spec: { identity: { inline: { personality: 'p' } }, providers: [{ inline: { protocol: 'openai-compatible', endpoint: 'http://localhost:1/v1', model: 'm', auth: { type: 'none' } } }] } },
  capabilities: {},
};

// ---- the floor: a bare node:http JSON echo in its own process ----
const BARE = `import http from 'node:http';
const s = http.createServer((req, res) => {
  const parts = [];
  req.on('data', (c) => parts.push(c));
  req.on('end', () => {
    let id = null;
    try { id = JSON.parse(Buffer.concat(parts).toString('utf8')).id; } catch {}
    const body = JSON.stringify({ jsonrpc: '2.0', id, result: { state: 'READY', uptime_ms: 0 } });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
s.keepAliveTimeout = 5000;
s.listen(0, '127.0.0.1', () => process.stdout.write('http://127.0.0.1:' + s.address().port + '/ckp\\n'));
`;
writeFileSync(join(work, 'bare.mjs'), BARE);

function spawnChild(args, opts = {}) {
  const c = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'], cwd: work, ...opts });
  children.add(c);
  let out = '';
  let err = '';
  c.stdout.setEncoding('utf8').on('data', (s) => (out += s));
  c.stderr.setEncoding('utf8').on('data', (s) => (err += s));
  c.out = () => out;
  c.err = () => err;
  return c;
}
async function waitFor(cond, what, ms = 10_000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

async function startBare() {
  const c = spawnChild([join(work, 'bare.mjs')]);
  await waitFor(() => c.out().includes('\n'), 'the bare echo');
  return { proc: c, url: c.out().trim() };
}

async function startClaw(extra = []) {
  writeFileSync(join(work, 'claw.runtime.yaml'), `data_dir: ${join(work, 'data')}\n`);
  const c = spawnChild([CLAW, 'run', join(ROOT, 'examples/minimal/claw.yaml'), '--config', join(work, 'claw.runtime.yaml'), ...extra]);
  return c;
}
async function startClawHttp() {
  const c = await startClaw(['--listen', 'http://127.0.0.1:0/ckp']);
  await waitFor(() => /"http transport listening","url":"([^"]+)"/.test(c.err()), 'the claw listener');
  const url = /"http transport listening","url":"([^"]+)"/.exec(c.err())[1];
  const r = await post(url, { jsonrpc: '2.0', id: 1, method: 'claw.initialize', params: INIT }, new http.Agent({ keepAlive: false }));
  if (!JSON.parse(r).result) throw new Error(`initialize failed: ${r}`);
  return { proc: c, url };
}

function post(url, msg, agent) {
  const u = new URL(url);
  const body = JSON.stringify(msg);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      const parts = [];
      res.on('data', (c) => parts.push(c));
      res.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const statusMsg = (i) => ({ jsonrpc: '2.0', id: i, method: 'claw.status' });

async function roundTrips(url, agent, n) {
  for (let i = 0; i < Math.min(100, n); i++) await post(url, statusMsg(i), agent); // warm-up
  const xs = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await post(url, statusMsg(i), agent);
    xs.push(performance.now() - t);
  }
  return xs;
}

async function throughput(url) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: SOCKETS });
  let next = 0;
  const worker = async () => {
    while (next < TOTAL) await post(url, statusMsg(next++), agent);
  };
  await Promise.all(Array.from({ length: CONC }, () => post(url, statusMsg(-1), agent))); // warm-up
  const t = performance.now();
  await Promise.all(Array.from({ length: CONC }, worker));
  const s = (performance.now() - t) / 1000;
  agent.destroy();
  return TOTAL / s;
}

const bare = await startBare();
const claw = await startClawHttp();
const variants = [
  ['bare', bare.url],
  ['claw', claw.url],
];
const rt = { bare: { ka: [], fresh: [] }, claw: { ka: [], fresh: [] } };
// Interleaved blocks so load drifts on this shared machine hit both alike.
const BLOCKS = 5;
for (let b = 0; b < BLOCKS; b++) {
  for (const [k, url] of variants) {
    const ka = new http.Agent({ keepAlive: true, maxSockets: 1 });
    rt[k].ka.push(...(await roundTrips(url, ka, N / BLOCKS)));
    ka.destroy();
    rt[k].fresh.push(...(await roundTrips(url, false, N / BLOCKS / 4)));
  }
}
const tput = { bare: [], claw: [] };
for (let b = 0; b < 3; b++) for (const [k, url] of variants) tput[k].push(await throughput(url));
bare.proc.kill();
claw.proc.kill();

// ---- RSS the listener adds ----
async function rssOf(withHttp) {
  const c = await startClaw(withHttp ? ['--listen', 'http://127.0.0.1:0/ckp'] : []);
  c.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'claw.initialize', params: INIT })}\n`);
  await waitFor(() => c.out().includes('"id":1'), 'initialize over stdio');
  if (withHttp) await waitFor(() => /"http transport listening"/.test(c.err()), 'the claw listener');
  await sleep(300);
  const idle = readRssKb(c.pid).rss;
  if (withHttp) {
    await waitFor(() => /"http transport listening","url":"([^"]+)"/.test(c.err()), 'the claw listener');
    const url = /"http transport listening","url":"([^"]+)"/.exec(c.err())[1];
    const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
    for (let i = 0; i < N; i += 4) await Promise.all([0, 1, 2, 3].map((j) => post(url, statusMsg(i + j), agent)));
    agent.destroy();
  } else {
    for (let i = 0; i < N; i++) c.stdin.write(`${JSON.stringify(statusMsg(i + 2))}\n`);
    await waitFor(() => c.out().includes(`"id":${N + 1},`), 'stdio status replies');
  }
  await sleep(300);
  const kb = readRssKb(c.pid).rss;
  c.kill();
  return { idle, busy: kb };
}
// The bare echo's own growth under the same traffic: what node:http's per-request allocation does to the heap.
async function bareGrowth() {
  const b = await startBare();
  await sleep(300);
  const idle = readRssKb(b.proc.pid).rss;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  for (let i = 0; i < N; i += 4) await Promise.all([0, 1, 2, 3].map((j) => post(b.url, statusMsg(i + j), agent)));
  agent.destroy();
  await sleep(300);
  const busy = readRssKb(b.proc.pid).rss;
  b.proc.kill();
  return busy - idle;
}
const rss = { stdio: [], http: [], bare: [] };
for (let i = 0; i < 3; i++) {
  rss.stdio.push(await rssOf(false));
  rss.http.push(await rssOf(true));
  rss.bare.push(await bareGrowth());
}

const q = (xs) => ({ p50: quantile(xs, 0.5), p90: quantile(xs, 0.9), p99: quantile(xs, 0.99) });
const rows = [];
for (const [k, label] of [['bare', 'bare node:http JSON echo (floor)'], ['claw', 'claw --listen http, claw.status']]) {
  rows.push({ label, mode: 'keep-alive', n: rt[k].ka.length, ...q(rt[k].ka) });
  rows.push({ label, mode: 'new connection each', n: rt[k].fresh.length, ...q(rt[k].fresh) });
}
const ratio = { keepalive: rows[2].p50 / rows[0].p50, fresh: rows[3].p50 / rows[1].p50 };
const thr = { bare: median(tput.bare), claw: median(tput.claw) };
const rssKb = {
  idleAdded: median(rss.http.map((x, i) => x.idle - rss.stdio[i].idle)),
  busyAdded: median(rss.http.map((x, i) => x.busy - rss.stdio[i].busy)),
  stdioIdle: median(rss.stdio.map((x) => x.idle)),
  stdioBusy: median(rss.stdio.map((x) => x.busy)),
  httpIdle: median(rss.http.map((x) => x.idle)),
  httpBusy: median(rss.http.map((x) => x.busy)),
  bareGrowth: median(rss.bare),
};
const head = { ...summaryHead(), load: loadavg().map((x) => x.toFixed(1)).join(' ') };
if (JSON_OUT) console.log(JSON.stringify({ ...head, rows, ratio, throughput: thr, rss_kb: rssKb, rss_samples: rss }, null, 2));
else {
  console.log(`${head.date}  node ${head.node}  load ${head.load}`);
  console.log('| server | connection | n | p50 ms | p90 ms | p99 ms |\n|---|---|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.label} | ${r.mode} | ${r.n} | ${f2(r.p50)} | ${f2(r.p90)} | ${f2(r.p99)} |`);
  console.log(`\nround trip p50 claw / bare: keep-alive ${f2(ratio.keepalive)}x, new connection ${f2(ratio.fresh)}x`);
  console.log(`throughput (${CONC} in flight over ${SOCKETS} keep-alive connections, ${TOTAL} requests, median of 3): bare ${Math.round(thr.bare)} req/s, claw ${Math.round(thr.claw)} req/s (${f2(thr.claw / thr.bare)}x)`);
  const m = (kb) => (kb / 1024).toFixed(1);
  console.log(`RSS (median of 3 pairs), initialized over stdio: stdio only ${m(rssKb.stdioIdle)} MB, with the HTTP listener ${m(rssKb.httpIdle)} MB: +${m(rssKb.idleAdded)} MB`);
  console.log(`  after ${N} claw.status (stdio: over stdin; http: over HTTP, 4 in flight): ${m(rssKb.stdioBusy)} MB vs ${m(rssKb.httpBusy)} MB: +${m(rssKb.busyAdded)} MB`);
  console.log(`  the bare node:http echo itself grows by ${m(rssKb.bareGrowth)} MB under the same ${N} requests`);
}
process.exit(0);
