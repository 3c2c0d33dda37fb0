// MQTT bridge end to end through the shipped dist/claw.mjs: `claw run --listen mqtt://...` and `claw send mqtt://...` through Debian's mosquitto.
// Requests published while the agent is down are answered when it returns; a broker restart mid-traffic loses no
// QoS 1 request and executes none twice; presence is retained and the Last Will says `offline` on kill -9.
// Skipped (with the reason printed) only when mosquitto is not installed; .ci/run installs it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentDir, AGENT, MANIFEST, TOKEN_ENV, initialize, countCall } from './fs-agent.ts';
import { CLAW } from './helpers/claw-process.ts';
import { findMosquitto, startMosquitto, type Mosquitto } from '../helpers/mosquitto.ts';
import { MqttConnection } from '../../src/transports/mqtt/connection.ts';
import { MqttSwarmLink } from '../../src/transports/mqtt/link.ts';
import { parseMqttUrl } from '../../src/transports/mqtt/endpoint.ts';
import { resolveMqttSettings } from '../../src/transports/mqtt/options.ts';

const HAVE = findMosquitto() !== undefined;
if (!HAVE) console.log('SKIP mqtt-bridge e2e: mosquitto not found (scripts/test-deps.sh installs it)');
const when = (c: boolean) => (c ? test : test.skip);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let broker: Mosquitto;
const children: ChildProcess[] = [];

test.before(async () => {
  if (!HAVE) return;
  try {
    // The shipped bundle: dist/claw.mjs serves mqtt:/mqtts: (src/runtime/schemes.ts).
    broker = await startMosquitto();
  } catch (e) {
    console.error('mqtt e2e setup failed:', e);
    throw e;
  }
});
test.after(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await broker?.stop();
});

interface Agent {
  child: ChildProcess;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** `claw run claw.yaml --listen <url>` as a daemon; resolves once the broker accepted its session. */
async function runAgent(dir: string, url: string, extra: string[] = [], runtime = process.execPath): Promise<Agent> {
  const child = spawn(runtime, [CLAW, 'run', join(dir, 'claw.yaml'), ...(url ? ['--listen', url] : []), ...extra], { cwd: dir, env: { PATH: process.env.PATH ?? '', ...TOKEN_ENV }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let err = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (c: string) => (err += c));
  child.stdout!.resume();
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const until = Date.now() + 10_000;
  while (!err.includes('"mqtt connected"')) {
    if (child.exitCode !== null || Date.now() > until) throw new Error(`agent did not connect: ${err.slice(-1500)}`);
    await sleep(20);
  }
  return { child, stderr: () => err, exited };
}

/** `claw send <url> <method> [params] ...`: exit code and the parsed reply line. */
function send(url: string, method: string, params?: unknown, extra: string[] = []): Promise<{ code: number | null; reply: any; stderr: string }> {
  const args = [CLAW, 'send', url, method, ...(params === undefined ? [] : [JSON.stringify(params)]), '--timeout', '20000', ...extra];
  const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      let reply: any;
      try {
        reply = JSON.parse(out.trim().split('\n').pop() ?? '');
      } catch {
        reply = undefined;
      }
      resolve({ code, reply, stderr: err });
    }),
  );
}

const init = (url: string) => send(url, 'claw.initialize', initialize(), ['--id', '1']);
const count = (url: string, tag: string, extra: string[] = []) => send(url, 'claw.tool.call', countCall(tag), extra);
const counted = (dir: string) => (existsSync(join(dir, 'count.log')) ? readFileSync(join(dir, 'count.log'), 'utf8').split('\n').filter(Boolean) : []);

when(HAVE)('claw send over MQTT: initialize, a tool call, and a retried request_id executed once', async () => {
  const dir = agentDir();
  const url = broker.url(`/e2e1/${AGENT}`);
  const a = await runAgent(dir, url, ['--log-level', 'debug']);
  try {
    const i = await init(url);
    assert.is(i.code, 0, `${i.stderr} ${JSON.stringify(i.reply)}`);
    assert.is(i.reply.id, 1);
    assert.is(i.reply.result.agentInfo.name, AGENT);
    // The same transport request_id (MQTT correlation) twice: the second is answered from the agent's stored
    // reply. (The kernel would also dedup on context.request_id; test/unit/mqtt-bridge isolates the transport's.)
    const first = await count(url, 'once', ['--request-id', 'rid-1']);
    assert.is(first.code, 0, `${first.stderr} ${JSON.stringify(first.reply)}`);
    assert.equal(first.reply.result.content, [{ type: 'text', text: 'counted once\n' }]);
    const again = await count(url, 'once', ['--request-id', 'rid-1']);
    assert.equal(again.reply, first.reply);
    assert.is(a.stderr().split('"mqtt duplicate request answered from the stored reply"').length - 1, 1);
    assert.equal(counted(dir), ['once']);
  } finally {
    a.child.kill('SIGTERM');
    await a.exited;
  }
});

when(HAVE)('requests published while the agent is down are answered when it comes back', async () => {
  const dir = agentDir();
  const url = broker.url(`/e2e2/${AGENT}`);
  const first = await runAgent(dir, url); // creates the persistent session and its inbox subscription
  first.child.kill('SIGTERM');
  assert.is(await first.exited, 0);
  const pending = [init(url)];
  await sleep(300);
  pending.push(count(url, 'queued-1'));
  await sleep(100);
  pending.push(count(url, 'queued-2'));
  await sleep(500);
  assert.equal(counted(dir), [], 'nothing runs while the agent is down');
  const back = await runAgent(dir, url);
  try {
    const [i, c1, c2] = await Promise.all(pending);
    assert.is(i.code, 0, i.stderr);
    assert.is(i.reply.result.agentInfo.name, AGENT);
    assert.is(c1.code, 0, c1.stderr);
    assert.is(c2.code, 0, c2.stderr);
    assert.equal(counted(dir).sort(), ['queued-1', 'queued-2']);
  } finally {
    back.child.kill('SIGTERM');
    await back.exited;
  }
});

when(HAVE)('broker restart mid-traffic: every QoS 1 request answered, none executed twice', async () => {
  const dir = agentDir();
  const url = broker.url(`/e2e3/${AGENT}`);
  const a = await runAgent(dir, url);
  try {
    assert.is((await init(url)).code, 0);
    const N = 16;
    const calls: Promise<{ code: number | null; reply: any; stderr: string }>[] = [];
    for (let i = 0; i < N; i++) {
      calls.push(count(url, `t${i}`));
      if (i === N / 2) {
        await broker.stop();
        await sleep(300);
        await broker.start();
      }
      await sleep(30);
    }
    const done = await Promise.all(calls);
    done.forEach((d, i) => assert.is(d.code, 0, `t${i}: ${d.stderr}; executed: ${counted(dir).join(',')}; agent: ${a.stderr().split('\n').filter((l) => /mqtt|error|warn/.test(l)).join('\n')}`));
    const tags = counted(dir);
    assert.equal([...tags].sort(), Array.from({ length: N }, (_, i) => `t${i}`).sort());
    assert.is(new Set(tags).size, tags.length, 'no request executed twice');
    assert.ok(a.stderr().split('"mqtt connected"').length - 1 >= 2, 'the agent reconnected after the restart');
  } finally {
    a.child.kill('SIGTERM');
    await a.exited;
  }
});

when(HAVE)('broker down for 1.5 s with a 20 ms heartbeat: no heartbeat from the outage is replayed at the reconnect', async () => {
  const dir = agentDir('heartbeat:\n  interval_ms: 20\n');
  const url = broker.url(`/e2e8/${AGENT}`);
  const a = await runAgent(dir, url);
  // A persistent session: the broker queues for it whatever the agent replays, whenever each reconnects.
  const beats: { ts: number }[] = [];
  const conn = await MqttConnection.open({
    settings: { ...resolveMqttSettings(parseMqttUrl(url)), backoff: { initialDelayMs: 50, maxDelayMs: 100 } },
    clientId: 'e2e8-watch',
    clean: false,
    log: { debug() {}, info() {}, warn() {}, error() {} },
    onMessage: (_t, payload) => {
      const m = JSON.parse(new TextDecoder().decode(payload));
      if (m.method === 'claw.heartbeat') beats.push({ ts: Date.parse(m.params.timestamp) });
    },
  });
  try {
    await conn.ready(3000);
    await conn.subscribe(`claw/e2e8/${AGENT}/outbox`);
    assert.is((await init(url)).code, 0);
    const t0 = Date.now();
    while (beats.length === 0 && Date.now() - t0 < 5000) await sleep(20);
    assert.ok(beats.length > 0, 'heartbeats before the outage');
    await broker.stop();
    const down = Date.now();
    await sleep(1500);
    const up = Date.now();
    await broker.start();
    const t1 = Date.now();
    while (a.stderr().split('"mqtt connected"').length - 1 < 2 && Date.now() - t1 < 8000) await sleep(20);
    const back = beats.length;
    while (beats.length < back + 5 && Date.now() - t1 < 8000) await sleep(20);
    // Heartbeats stamped while the broker was down (a build that keeps them at QoS 1 replays them all: 64 measured).
    const stale = beats.filter((b) => b.ts > down + 100 && b.ts < up - 100);
    assert.is(stale.length, 0, `${stale.length} heartbeats from the outage replayed`);
    assert.ok(beats.length >= back + 5, 'heartbeats resume after the reconnect');
    const log = a.stderr();
    assert.is(log.split('mqtt notifications dropped while disconnected').length - 1, 1, 'logged once per outage');
    assert.match(log, /"dropped_notifications":\d+/);
  } finally {
    await conn.close();
    a.child.kill('SIGTERM');
    await a.exited;
  }
});

when(HAVE)('presence: retained ready while up, Last Will offline on kill -9, ready again on return', async () => {
  const dir = agentDir();
  const url = broker.url(`/e2e4/${AGENT}`);
  const a = await runAgent(dir, url);
  const settings = resolveMqttSettings(parseMqttUrl(broker.url('/e2e4')));
  let link!: MqttSwarmLink;
  const conn = await MqttConnection.open({ settings, clientId: 'e2e4-watcher', clean: true, log: { debug() {}, info() {}, warn() {}, error() {} }, onMessage: (t, p, pr) => void link.handle(t, p, pr) });
  link = new MqttSwarmLink({ connection: conn, swarm: 'e2e4', prefix: 'claw', protocolVersion: 5, clientId: 'e2e4-watcher' });
  const seen: string[] = [];
  try {
    await conn.ready(5000);
    await link.watchPresence((agent, p) => agent === AGENT && p && seen.push(p.status));
    const wait = async (s: string) => {
      const until = Date.now() + 5000;
      while (link.peers().get(AGENT)?.status !== s) {
        if (Date.now() > until) throw new Error(`presence never became ${s}; saw ${seen.join(',')}`);
        await sleep(20);
      }
    };
    await wait('ready');
    a.child.kill('SIGKILL');
    await a.exited;
    await wait('offline');
    const b = await runAgent(dir, url);
    await wait('ready');
    b.child.kill('SIGTERM');
    await b.exited;
    await wait('offline');
    assert.equal(seen, ['ready', 'offline', 'ready', 'offline']);
  } finally {
    await conn.close();
  }
});

when(HAVE)('binding in claw.runtime.yaml: transports entry with an mqtt: block (MQTT 3.1.1, own client id)', async () => {
  const url = broker.url(`/e2e5/${AGENT}`);
  const dir = agentDir(`transports:\n  - listen: ${url}\n    mqtt: { protocol_version: 4, client_id: e2e5-agent, keepalive_s: 10 }\n`);
  const a = await runAgent(dir, ''); // no --listen: the configuration alone binds the transport
  try {
    assert.match(a.stderr(), /"client_id":"e2e5-agent"/);
    assert.match(a.stderr(), /"protocol":"3\.1\.1"/);
    const i = await send(`${url}?protocol=3.1.1`, 'claw.initialize', initialize(), ['--id', '1']);
    assert.is(i.code, 0, i.stderr);
    assert.is(i.reply.result.agentInfo.name, AGENT);
  } finally {
    a.child.kill('SIGTERM');
    await a.exited;
  }
});

when(HAVE)('agent killed -9 mid-request: after the restart the caller hears "interrupted", the call is not run again', async () => {
  // The same agent, its `count` tool made slow (it logs its start, then sleeps 3 s).
  const dir = mkdtempSync(join(tmpdir(), 'claw-mqtt-e2e-'));
  writeFileSync(join(dir, 'claw.yaml'), MANIFEST);
  writeFileSync(
    join(dir, 'claw.runtime.yaml'),
    `data_dir: ./data\ntools:\n  count:\n    exec: { bin: /bin/sh, argv: ["-c", "echo \\"$0\\" >> ${dir}/count.log; sleep 3; echo counted $0", "{{tag}}"] }\n`,
  );
  const url = broker.url(`/e2e6/${AGENT}`);
  const a = await runAgent(dir, url);
  assert.is((await init(url)).code, 0);
  const pending = count(url, 'slow', ['--request-id', 'slow-1']);
  const until = Date.now() + 5000;
  while (counted(dir).length === 0) {
    if (Date.now() > until) throw new Error(`the tool never started: ${a.stderr().slice(-800)}`);
    await sleep(20);
  }
  a.child.kill('SIGKILL');
  await a.exited;
  const b = await runAgent(dir, url);
  try {
    const r = await pending;
    assert.is(r.code, 1, r.stderr);
    assert.equal(r.reply.error.code, -32603);
    assert.equal(r.reply.error.data, { request_id: 'slow-1', reason: 'interrupted' });
    const again = await count(url, 'slow', ['--request-id', 'slow-1']);
    assert.equal(again.reply, r.reply);
    await sleep(3500); // long enough for a second run to have logged itself
    assert.equal(counted(dir), ['slow'], 'run once, never again');
    assert.match(b.stderr(), /answered as interrupted/);
  } finally {
    b.child.kill('SIGTERM');
    await b.exited;
  }
});

// The same bridge on every runtime the bundle supports (mqtt.js over node:net on Node 18/22 and Bun).
const RUNTIMES: [string, string][] = [
  ['node18', join(process.cwd(), '.build/runtimes/node18/node_modules/.bin/node')],
  ['node22', join(process.cwd(), '.build/runtimes/node22/node_modules/.bin/node')],
  ['bun', join(process.cwd(), '.build/runtimes/bun/node_modules/.bin/bun')],
];
for (const [name, bin] of RUNTIMES) {
  if (HAVE && !existsSync(bin)) console.log(`SKIP mqtt e2e on ${name}: ${bin} missing (scripts/install-runtimes.sh installs it)`);
  when(HAVE && existsSync(bin))(`${name}: claw run --listen mqtt:// serves initialize and a tool call`, async () => {
    const dir = agentDir();
    const url = broker.url(`/rt-${name}/${AGENT}`);
    const a = await runAgent(dir, url, [], bin);
    try {
      const i = await init(url);
      assert.is(i.code, 0, `${i.stderr} ${a.stderr().slice(-600)}`);
      const c = await count(url, name);
      assert.is(c.code, 0, c.stderr);
      assert.equal(c.reply.result.content, [{ type: 'text', text: `counted ${name}\n` }]);
      assert.equal(counted(dir), [name]);
    } finally {
      a.child.kill('SIGTERM');
      assert.is(await a.exited, 0);
    }
  });
}

test.run();
