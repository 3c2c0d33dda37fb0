#!/usr/bin/env node
// MQTT bridge round trip (docs/transports.md, MQTT) through Debian's mosquitto on loopback, against a bare mqtt.js
// publish/subscribe echo in the same run and through the same broker.
//
//   bare mqtt.js (floor)   a responder process (the `mqtt` package entry) subscribed to a request topic publishes
//                          each payload back to a reply topic; the requester waits for it. QoS 1, MQTT 5, noDelay.
//   claw, MQTT 5           `claw run examples/minimal/claw.yaml --listen mqtt://.../bench/m5` (the runtime with
//                          the mqtt: scheme registered, built with the production aliases), initialized, then
//                          sequential `claw.status` through the claw MQTT client (response topic + correlation).
//   claw, MQTT 3.1.1       the same with ?protocol=3.1.1 (reply route in the payload envelope).
//
// Usage: node scripts/bench-mqtt.mjs [--n=500] [--json]   (needs mosquitto: scripts/test-deps.sh)
import { build } from 'esbuild';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { ROOT, sleep, waitForTcp, quantile, f2, summaryHead } from './bench/lib.mjs';
import { bundle, ALIASES } from '../build.config.mjs';

const arg = (k, d) => {
  const a = process.argv.find((x) => x.startsWith(`--${k}=`));
  return a ? a.slice(k.length + 3) : d;
};
const N = Number(arg('n', 500));
const JSON_OUT = process.argv.includes('--json');
const log = (s) => process.stderr.write(`${s}\n`);
const MOSQUITTO = ['/usr/sbin/mosquitto', '/usr/bin/mosquitto', '/usr/local/sbin/mosquitto'].find((p) => existsSync(p));
if (!MOSQUITTO) {
  log('bench-mqtt: mosquitto not found (bash scripts/test-deps.sh installs it)');
  process.exit(2);
}

const work = mkdtempSync(join(tmpdir(), 'claw-bench-mqtt-'));
const children = new Set();
const cleanup = () => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(work, { recursive: true, force: true });
};
process.on('exit', cleanup);
process.on('SIGINT', () => process.exit(130));
const child = (cmd, args, opts = {}) => {
  const c = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'], ...opts });
  let err = '';
  c.stderr?.setEncoding('utf8').on('data', (s) => (err += s));
  c.err = () => err;
  children.add(c);
  return c;
};

// ---- broker ----
const port = await new Promise((r) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const p = s.address().port;
    s.close(() => r(p));
  });
});
writeFileSync(
  join(work, 'mosquitto.conf'),
  [`listener ${port} 127.0.0.1`, 'allow_anonymous true', 'set_tcp_nodelay true', 'persistence false', ...(process.getuid?.() === 0 ? ['user root'] : []), ''].join('\n'),
);
child(MOSQUITTO, ['-c', join(work, 'mosquitto.conf')]);
await waitForTcp(port, 'mosquitto');
const broker = `mqtt://127.0.0.1:${port}`;

// ---- builds: the runtime (its scheme tables include mqtt:), and the claw client, both with the production aliases ----
mkdirSync(join(ROOT, '.build'), { recursive: true });
const clawRel = `.build/bench-claw-mqtt-${process.pid}.mjs`;
const built = await bundle({ entry: join(ROOT, 'targets/node.ts'), outfile: clawRel });
const CLAW = join(ROOT, clawRel);
children.add({ kill: () => rmSync(CLAW, { force: true }) });
await build({ entryPoints: [join(ROOT, 'src/transports/mqtt/client-mqtt.ts')], bundle: true, platform: 'node', format: 'esm', target: 'node18', alias: ALIASES,
  // CJS dependencies require() node built-ins: give the ESM bundle a real require, as build.config.mjs does.
  banner: { js: "import{createRequire as __cr}from'node:module';const require=__cr(import.meta.url);" },
  outfile: join(work, 'client.mjs'), logLevel: 'error' });
const { connectMqttClient } = await import(pathToFileURL(join(work, 'client.mjs')).href);
const { default: mqtt } = await import('mqtt');

const INIT = {
  protocolVersion: '0.3.0',
  clientInfo: { name: 'bench-mqtt', version: '1' },
  manifest: { kind: 'Claw', metadata: { name: 'x' }, spec: { identity: { inline: { personality: 'p' } }, providers: [{ inline: { protocol: 'openai-compatible', endpoint: 'http://localhost:1/v1', model: 'm', auth: { type: 'none' } } }] } },
  capabilities: {},
};

async function rounds(label, once, n) {
  for (let i = 0; i < Math.min(50, n); i++) await once(i); // warm-up
  const xs = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await once(i);
    xs.push(performance.now() - t);
  }
  return { label, n, p50: quantile(xs, 0.5), p90: quantile(xs, 0.9), p99: quantile(xs, 0.99) };
}

// ---- floor: bare mqtt.js echo through the same broker ----
const responderFile = join(ROOT, '.build', `bench-mqtt-responder-${process.pid}.mjs`);
writeFileSync(
  responderFile,
  `import mqtt from 'mqtt';
const c = mqtt.connect(process.argv[2], { protocolVersion: 5, clientId: 'bare-responder', clean: true });
c.on('connect', () => { c.stream.setNoDelay?.(true); c.subscribe('bare/req', { qos: 1 }, () => process.stdout.write('ready\\n')); });
c.on('message', (_t, payload) => c.publish('bare/res', payload, { qos: 1 }));
`,
);
children.add({ kill: () => rmSync(responderFile, { force: true }) });
const responder = spawn(process.execPath, [responderFile, broker], { stdio: ['ignore', 'pipe', 'inherit'], cwd: ROOT });
children.add(responder);
await new Promise((r) => responder.stdout.once('data', r));
const requester = mqtt.connect(broker, { protocolVersion: 5, clientId: 'bare-requester', clean: true });
await new Promise((r) => requester.once('connect', r));
requester.stream.setNoDelay?.(true);
await new Promise((r) => requester.subscribe('bare/res', { qos: 1 }, r));
let wake;
requester.on('message', () => wake?.());
const bareOnce = (i) =>
  new Promise((resolve) => {
    wake = resolve;
    requester.publish('bare/req', JSON.stringify({ jsonrpc: '2.0', id: i, method: 'claw.status' }), { qos: 1 });
  });

// ---- claw agents ----
async function agent(path) {
  // State (the MQTT request journal) goes to the scratch directory, not beside the example manifest.
  writeFileSync(join(work, 'claw.runtime.yaml'), `data_dir: ${join(work, 'data')}\n`);
  const c = child(process.execPath, [CLAW, 'run', join(ROOT, 'examples/minimal/claw.yaml'), '--config', join(work, 'claw.runtime.yaml'), '--listen', `${broker}${path}`], { cwd: work });
  // A request published before the agent's first session exists has no subscriber and is dropped by the broker.
  for (let i = 0; !c.err().includes('"mqtt connected"'); i++) {
    if (i > 1000 || c.exitCode !== null) throw new Error(`agent did not connect: ${c.err()}`);
    await sleep(10);
  }
  const client = await connectMqttClient(`${broker}${path}`, { baseDir: ROOT });
  const init = await client.request({ jsonrpc: '2.0', id: 1, method: 'claw.initialize', params: INIT }, { timeoutMs: 15000 });
  if (!init.result) throw new Error(`initialize failed: ${JSON.stringify(init)} ${c.err()}`);
  return { client, once: (i) => client.request({ jsonrpc: '2.0', id: i + 2, method: 'claw.status' }, { timeoutMs: 5000 }) };
}
const a5 = await agent('/bench/m5');
const a4 = await agent('/bench/m4?protocol=3.1.1');

const rows = [];
// Interleave variants in blocks so machine load drifts hit all of them alike.
const blocks = 5;
const acc = { bare: [], m5: [], m4: [] };
for (let b = 0; b < blocks; b++) {
  acc.bare.push(await rounds('bare', bareOnce, N / blocks));
  acc.m5.push(await rounds('m5', a5.once, N / blocks));
  acc.m4.push(await rounds('m4', a4.once, N / blocks));
}
// Blocks are equal-sized, so pooled quantiles come from re-running the statistics on the raw samples; keep the
// median of block p50s and the max of block p99s (conservative).
const pool = (xs, k, f) => f(...xs.map((x) => x[k]));
const med = (...v) => v.sort((x, y) => x - y)[v.length >> 1];
for (const [key, label] of [['bare', 'bare mqtt.js pub/sub echo (floor)'], ['m5', 'claw, MQTT 5 (response topic + correlation)'], ['m4', 'claw, MQTT 3.1.1 (payload envelope)']]) {
  rows.push({ label, n: N, p50: pool(acc[key], 'p50', med), p90: pool(acc[key], 'p90', med), p99: pool(acc[key], 'p99', Math.max) });
}
await a5.client.close();
await a4.client.close();
requester.end(true);

const head = { ...summaryHead(), load: loadavg().map((x) => x.toFixed(1)).join(' '), broker: 'mosquitto', bundle_kb: +(built.raw / 1024).toFixed(1) };
if (JSON_OUT) console.log(JSON.stringify({ ...head, rows }, null, 2));
else {
  console.log(`${head.date}  node ${head.node}  load ${head.load}  claw+mqtt bundle ${head.bundle_kb} KB`);
  console.log('| variant | n | p50 ms | p90 ms | p99 ms |\n|---|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.label} | ${r.n} | ${f2(r.p50)} | ${f2(r.p90)} | ${f2(r.p99)} |`);
}
process.exit(0);
