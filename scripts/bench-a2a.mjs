#!/usr/bin/env node
// What the A2A binding costs over CKP's own task method (docs/a2a.md): one blocking A2A `SendMessage` (A2A 1.0
// JSON-RPC on /a2a) against one `claw.task.create` (CKP JSON-RPC on /ckp), both on the same HTTP listener of one
// `dist/claw.mjs run --start`, both creating a task and running one agent turn answered by the offline rules
// provider (no model). The two are interleaved (A2A, CKP, A2A, …) so the load of a shared machine falls on both
// alike; each round trip is timed alone on a keep-alive connection, after a warm-up. Reported: p50 / p90 of each
// and the ratio of the medians (goal ≤ 1.3×), for tasks kept in the memory database and in the data_dir file
// (docs/a2a.md "Tasks"), with the machine's load average (`uptime`) before and after.
// Usage: npm run build && node scripts/bench-a2a.mjs [--n=N] [--store=memory|file|both] [--json]
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as http from 'node:http';

const arg = (k, d) => process.argv.find((x) => x.startsWith(`--${k}=`))?.split('=')[1] ?? d;
const N = Number(arg('n', 500));
const STORES = arg('store', 'both') === 'both' ? ['memory', 'file'] : [arg('store')];
const JSON_OUT = process.argv.includes('--json');
const ROOT = new URL('..', import.meta.url).pathname;
const CLAW = join(ROOT, 'dist/claw.mjs');
const TOKEN = 'bench-a2a-token-0123456789';

const manifest = (memory) => `claw: "0.3.0"
kind: Claw
metadata: { name: "bench-a2a", version: "1.0.0" }
spec:
  identity:
    inline: { name: "bench-a2a", personality: "You answer.", autonomy: "autonomous" }
  providers:
    - inline: { name: "offline", protocol: "custom", endpoint: "file:rules.yaml", model: "rules", auth: { type: "none" } }
  channels:
    - inline: { name: "terminal", type: "cli", transport: "stdio", auth: { secret_ref: "CLI_TOKEN" }, access_control: { mode: "open" } }
    - inline: { name: "agents", type: "webhook", transport: "webhook", auth: { secret_ref: "BENCH_TOKEN" }, access_control: { mode: "allowlist", allowed_ids: ["BENCH_TOKEN"] } }
${memory ? `  memory:\n    inline:\n      stores:\n        - { name: "context", type: "conversation", backend: "sqlite" }\n` : ''}  sandbox: { inline: { level: "none" } }
  policies:
    - inline:
        rules:
          - { id: "allow-all", action: "allow", scope: "all" }
`;
const RULES = `rules:
  - match: "^hello"
    message: "Hello from the board."
default:
  message: "No rule for that."
`;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const load = () => execFileSync('uptime', { encoding: 'utf8' }).trim().replace(/^.*load average:\s*/, '');

function post(url, body, headers, agent) {
  const u = new URL(url);
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), authorization: `Bearer ${TOKEN}`, ...headers } },
      (res) => {
        const parts = [];
        res.on('data', (c) => parts.push(c));
        res.on('end', () => resolve(JSON.parse(Buffer.concat(parts).toString('utf8'))));
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

async function startClaw(store) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-a2a-'));
  writeFileSync(join(dir, 'claw.yaml'), manifest(store === 'memory'));
  writeFileSync(join(dir, 'rules.yaml'), RULES);
  writeFileSync(
    join(dir, 'claw.runtime.yaml'),
    `data_dir: ${join(dir, 'data')}
log: { level: warn }
transports:
  - listen: http://127.0.0.1:0/ckp
    http: { auth: { bearer_token_refs: [BENCH_TOKEN] } }
a2a: { enabled: true, max_tasks: ${2 * N + 200} }
`,
  );
  const c = spawn(process.execPath, [CLAW, 'run', 'claw.yaml', '--start', '--config', join(dir, 'claw.runtime.yaml'), '--log-level', 'info'], { cwd: dir, stdio: ['pipe', 'ignore', 'pipe'], env: { ...process.env, BENCH_TOKEN: TOKEN } });
  let err = '';
  c.stderr.setEncoding('utf8').on('data', (s) => (err += s));
  const end = Date.now() + 15_000;
  while (!/"a2a serving"/.test(err)) {
    if (Date.now() > end || c.exitCode !== null) throw new Error(`claw did not start: ${err.slice(-1000)}`);
    await sleep(20);
  }
  const url = /"http transport listening","url":"([^"]+)"/.exec(err)[1];
  const kind = /"a2a serving".*"tasks":"(\w+)"/.exec(err)?.[1];
  return { c, dir, url, a2a: url.replace(/\/ckp$/, '/a2a'), kind };
}

const a2aSend = (i) => ({ jsonrpc: '2.0', id: i, method: 'SendMessage', params: { message: { messageId: `m-${i}`, role: 'ROLE_USER', parts: [{ text: 'hello' }] } } });
const ckpCreate = (i) => ({ jsonrpc: '2.0', id: i, method: 'claw.task.create', params: { text: 'hello' } });

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

async function measure(store) {
  const claw = await startClaw(store);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const a2a = async (i) => {
    const r = await post(claw.a2a, a2aSend(i), { 'a2a-version': '1.0' }, agent);
    if (r.result?.task?.status?.state !== 'TASK_STATE_COMPLETED') throw new Error(`A2A: ${JSON.stringify(r)}`);
  };
  const ckp = async (i) => {
    const r = await post(claw.url, ckpCreate(i), {}, agent);
    if (r.result?.state !== 'completed') throw new Error(`CKP: ${JSON.stringify(r)}`);
  };
  try {
    for (let i = 0; i < 50; i++) {
      await a2a(i);
      await ckp(i);
    }
    const xa = [];
    const xc = [];
    for (let i = 0; i < N; i++) {
      let t = performance.now();
      await a2a(i);
      xa.push(performance.now() - t);
      t = performance.now();
      await ckp(i);
      xc.push(performance.now() - t);
    }
    const r = { store: claw.kind, n: N, a2a_p50_ms: pct(xa, 50), a2a_p90_ms: pct(xa, 90), ckp_p50_ms: pct(xc, 50), ckp_p90_ms: pct(xc, 90) };
    r.ratio_p50 = r.a2a_p50_ms / r.ckp_p50_ms;
    return r;
  } finally {
    agent.destroy();
    claw.c.kill('SIGTERM');
    await new Promise((res) => (claw.c.exitCode !== null ? res() : claw.c.once('exit', res)));
    rmSync(claw.dir, { recursive: true, force: true });
  }
}

const before = load();
const results = [];
for (const s of STORES) results.push(await measure(s));
const after = load();
if (JSON_OUT) console.log(JSON.stringify({ load_before: before, load_after: after, results }));
else {
  console.log(`load average (1, 5, 15 min) before: ${before}; after: ${after}; ${N} round trips each`);
  for (const r of results)
    console.log(
      `tasks in ${r.store}: A2A SendMessage p50 ${r.a2a_p50_ms.toFixed(2)} ms p90 ${r.a2a_p90_ms.toFixed(2)} ms | claw.task.create p50 ${r.ckp_p50_ms.toFixed(2)} ms p90 ${r.ckp_p90_ms.toFixed(2)} ms | ratio of medians ${r.ratio_p50.toFixed(3)}×`,
    );
}
