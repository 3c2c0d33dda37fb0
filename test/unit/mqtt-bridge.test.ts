// The MQTT bridge against a real broker (Debian's mosquitto, MQTT 5 and 3.1.1) and aedes in-process (3.1.1):
// request/response both ways of routing, request_id dedup, a persistent session that queues requests while the
// agent is away, presence (retained ready, offline on close), reconnect after a broker restart.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { InboundFrame, Transport } from '../../src/kernel/ports.ts';
import { createMqttTransport, type MqttTransport } from '../../src/transports/mqtt/transport.ts';
import { connectMqttClient } from '../../src/transports/mqtt/client-mqtt.ts';
import { parseMqttUrl } from '../../src/transports/mqtt/endpoint.ts';
import { resolveMqttSettings } from '../../src/transports/mqtt/options.ts';
import { MqttConnection } from '../../src/transports/mqtt/connection.ts';
import { MqttSwarmLink } from '../../src/transports/mqtt/link.ts';
import { freePort, startMosquitto, useMosquitto } from '../helpers/mosquitto.ts';
import { captureLogger, until } from './helpers/fakes.ts';

const mq = useMosquitto(test, 'mqtt-bridge');
const HAVE = mq.have;
const when = mq.when;
const track = mq.track;

/** A fake router: answers every request with the method and params it got, counts executions. */
function echoRouter(t: Transport) {
  const seen: string[] = [];
  t.start((f: InboundFrame) => {
    if (!('text' in f.payload)) return f.reply({ jsonrpc: '2.0', id: null, error: { code: -32600, message: f.payload.error } });
    const m = JSON.parse(f.payload.text);
    seen.push(m.method);
    if (m.id !== undefined) f.reply({ jsonrpc: '2.0', id: m.id, result: { method: m.method, params: m.params ?? null, n: seen.length } });
  });
  return seen;
}

async function agent(url: string, extra: { replyWindowMs?: number } = {}): Promise<MqttTransport> {
  const t = await createMqttTransport({ settings: resolveMqttSettings(parseMqttUrl(url)), log: captureLogger(), ...extra });
  await t.ready(5000);
  return t;
}


when(HAVE)('MQTT 5: request/response through mosquitto (response topic + correlation data)', async () => {
  const t = track(await agent(mq.broker().url('/t1/a1')));
  const seen = echoRouter(t);
  const c = track(await connectMqttClient(mq.broker().url('/t1/a1'), { baseDir: '/' }));
  const r = await c.request({ jsonrpc: '2.0', id: 7, method: 'claw.status', params: { x: 1 } }, { timeoutMs: 3000 });
  assert.equal(r, { jsonrpc: '2.0', id: 7, result: { method: 'claw.status', params: { x: 1 }, n: 1 } });
  assert.equal(seen, ['claw.status']);
});

when(HAVE)('MQTT 3.1.1: the reply route travels in the payload envelope', async () => {
  const t = track(await agent(mq.broker().url('/t2/a1?protocol=3.1.1')));
  echoRouter(t);
  const c = track(await connectMqttClient(mq.broker().url('/t2/a1?protocol=4'), { baseDir: '/' }));
  const r = await c.request({ jsonrpc: '2.0', id: 'x', method: 'm' }, { timeoutMs: 3000 });
  assert.equal(r, { jsonrpc: '2.0', id: 'x', result: { method: 'm', params: null, n: 1 } });
});

when(HAVE)('a redelivered request_id is answered from the stored reply, not executed twice', async () => {
  const t = track(await agent(mq.broker().url('/t3/a1')));
  const seen = echoRouter(t);
  const c = track(await connectMqttClient(mq.broker().url('/t3/a1'), { baseDir: '/' }));
  const msg = { jsonrpc: '2.0' as const, id: 1, method: 'work' };
  const a = await c.request(msg, { requestId: 'req-1', timeoutMs: 3000 });
  const b = await c.request(msg, { requestId: 'req-1', timeoutMs: 3000 });
  const d = await c.request(msg, { requestId: 'req-2', timeoutMs: 3000 });
  assert.equal(a, { jsonrpc: '2.0', id: 1, result: { method: 'work', params: null, n: 1 } });
  assert.equal(b, a);
  assert.equal(d, { jsonrpc: '2.0', id: 1, result: { method: 'work', params: null, n: 2 } });
  assert.equal(seen, ['work', 'work']);
});

when(HAVE)('requests published while the agent is away are delivered when it comes back (persistent session)', async () => {
  const first = await agent(mq.broker().url('/t4/a1'));
  await first.close();
  const c = track(await connectMqttClient(mq.broker().url('/t4/a1'), { baseDir: '/' }));
  const replies = [1, 2, 3].map((id) => c.request({ jsonrpc: '2.0', id, method: `m${id}` }, { timeoutMs: 5000 }));
  await new Promise((r) => setTimeout(r, 200));
  const back = track(await agent(mq.broker().url('/t4/a1')));
  const seen = echoRouter(back);
  const got = await Promise.all(replies);
  assert.equal(got.map((r: any) => r.result.method), ['m1', 'm2', 'm3']);
  assert.equal(seen, ['m1', 'm2', 'm3']);
});

when(HAVE)('presence: retained ready while connected, offline after a clean close', async () => {
  const t = await agent(mq.broker().url('/t5/a1'));
  await t.setPresence('busy', { load: 1 });
  const watcher = await watcherLink('t5');
  await until(() => watcher.link.peers().get('a1')?.status === 'busy', 3000);
  assert.equal(watcher.link.peers().get('a1')?.info, { load: 1 });
  await t.close();
  await until(() => watcher.link.peers().get('a1')?.status === 'offline', 3000);
  // Retained: a subscriber arriving later still sees it.
  const late = await watcherLink('t5');
  await until(() => late.link.peers().has('a1'), 3000);
  assert.is(late.link.peers().get('a1')?.status, 'offline');
});

when(HAVE)('broker restart: the connection comes back (backoff) and requests still get answered', async () => {
  const url = mq.broker().url('/t6/a1');
  const settings = { ...resolveMqttSettings(parseMqttUrl(url)) };
  settings.backoff = { initialDelayMs: 50, maxDelayMs: 200 };
  const t = track(await createMqttTransport({ settings, log: captureLogger() }));
  await t.ready(5000);
  const seen = echoRouter(t);
  await mq.broker().stop();
  await mq.broker().start();
  await t.ready(5000);
  const c = track(await connectMqttClient(url, { baseDir: '/' }));
  const r: any = await c.request({ jsonrpc: '2.0', id: 1, method: 'after-restart' }, { timeoutMs: 5000 });
  assert.is(r.result.method, 'after-restart');
  assert.equal(seen, ['after-restart']);
  // mosquitto publishes every connected client's Last Will when it shuts down; the agent re-announces `ready`
  // at its reconnect, so the retained document is right again.
  const w = await watcherLink('t6');
  await until(() => w.link.peers().get('a1')?.status === 'ready', 3000);
});

test('reconnect backoff doubles up to its cap while no broker listens, then connects when one appears', async () => {
  const port = await freePort();
  const settings = resolveMqttSettings(parseMqttUrl(`mqtt://127.0.0.1:${port}/t7/a1`));
  settings.backoff = { initialDelayMs: 40, maxDelayMs: 160 };
  const log = captureLogger();
  const t = track(await createMqttTransport({ settings, log }));
  const delays = () => log.entries.filter((e) => e.msg === 'mqtt reconnect scheduled').map((e) => e.fields!.delay_ms);
  await until(() => delays().length >= 5, 3000);
  assert.equal(delays().slice(0, 5), [40, 80, 160, 160, 160]);
  // Refused connections are logged once per outage, not once per attempt.
  assert.is(log.entries.filter((e) => e.msg === 'mqtt connection error').length, 1);
  if (!HAVE) return;
  const b = await startMosquitto({ port });
  try {
    await t.ready(3000);
    assert.is(delays().length >= 5, true);
  } finally {
    await b.stop();
  }
});

async function watcherLink(swarm: string) {
  const settings = resolveMqttSettings(parseMqttUrl(mq.broker().url(`/${swarm}`)));
  let link!: MqttSwarmLink;
  const conn = await MqttConnection.open({ settings, clientId: `w-${Math.random().toString(36).slice(2)}`, clean: true, log: captureLogger(), onMessage: (t, p, pr) => void link.handle(t, p, pr) });
  link = new MqttSwarmLink({ connection: conn, swarm, prefix: 'claw', protocolVersion: 5, clientId: 'w' });
  track({ close: () => conn.close() });
  await conn.ready(3000);
  await link.watchPresence();
  return { link, conn };
}

test.run();
