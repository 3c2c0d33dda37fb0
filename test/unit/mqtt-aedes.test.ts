// MQTT 3.1.1 against aedes in-process (aedes speaks 3.1.1 only): the payload-envelope fallback for the reply route,
// request_id dedup through the envelope, and a client that asks for MQTT 5 against a 3.1.1-only broker is refused
// by the broker (not silently downgraded). noDelay is set on the broker's sockets too (Nagle adds ~40-90 ms).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { InboundFrame } from '../../src/kernel/ports.ts';
import { createMqttTransport, type MqttTransport } from '../../src/transports/mqtt/transport.ts';
import { connectMqttClient } from '../../src/transports/mqtt/client-mqtt.ts';
import { parseMqttUrl } from '../../src/transports/mqtt/endpoint.ts';
import { resolveMqttSettings } from '../../src/transports/mqtt/options.ts';
import { captureLogger } from './helpers/fakes.ts';
import { startAedes, type InProcessBroker } from './helpers/aedes.ts';
import { createFileJournal } from '../../src/transports/mqtt/journal.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let mqttd: InProcessBroker;
let broker: InProcessBroker['broker'];
let port = 0;
const closers: (() => Promise<void>)[] = [];

test.before(async () => {
  mqttd = await startAedes();
  ({ broker, port } = mqttd);
});
test.after.each(async () => {
  for (const c of closers.splice(0).reverse()) await c().catch(() => {});
});
test.after(() => mqttd.close());

const url = (path: string) => `mqtt://127.0.0.1:${port}${path}?protocol=3.1.1`;

async function agent(path: string): Promise<{ t: MqttTransport; seen: string[] }> {
  const t = await createMqttTransport({ settings: resolveMqttSettings(parseMqttUrl(url(path))), log: captureLogger() });
  closers.push(() => t.close());
  await t.ready(3000);
  const seen: string[] = [];
  t.start((f: InboundFrame) => {
    const m = JSON.parse((f.payload as { text: string }).text);
    seen.push(m.method);
    if (m.id !== undefined) f.reply({ jsonrpc: '2.0', id: m.id, result: { method: m.method, n: seen.length } });
  });
  return { t, seen };
}

test('3.1.1: request/response through the payload envelope', async () => {
  const { seen } = await agent('/a1/bot');
  const c = await connectMqttClient(url('/a1/bot'), { baseDir: '/' });
  closers.push(() => c.close());
  const r = await c.request({ jsonrpc: '2.0', id: 5, method: 'claw.status' }, { timeoutMs: 3000 });
  assert.equal(r, { jsonrpc: '2.0', id: 5, result: { method: 'claw.status', n: 1 } });
  assert.equal(seen, ['claw.status']);
});

test('3.1.1: a repeated request_id in the envelope is answered from the stored reply', async () => {
  const { seen } = await agent('/a2/bot');
  const c = await connectMqttClient(url('/a2/bot'), { baseDir: '/' });
  closers.push(() => c.close());
  const msg = { jsonrpc: '2.0' as const, id: 1, method: 'work' };
  const a = await c.request(msg, { requestId: 'same', timeoutMs: 3000 });
  const b = await c.request(msg, { requestId: 'same', timeoutMs: 3000 });
  assert.equal(b, a);
  assert.equal(seen, ['work']);
});

/** An agent that refuses every request (-32600, state INIT) until `accept()`, then runs them and counts the runs. */
async function refusingAgent(path: string, journalDir?: string) {
  const journal = journalDir ? createFileJournal(journalDir, `claw-${path.split('/').join('-')}`, { windowMs: 300_000, now: Date.now }) : undefined;
  const t = await createMqttTransport({ settings: resolveMqttSettings(parseMqttUrl(url(path))), log: captureLogger(), journal });
  closers.push(() => t.close());
  await t.ready(3000);
  const state = { ready: false, runs: 0 };
  t.start((f: InboundFrame) => {
    const m = JSON.parse((f.payload as { text: string }).text);
    if (!state.ready) return f.reply({ jsonrpc: '2.0', id: m.id, error: { code: -32600, message: 'Invalid request: send claw.initialize first', data: { state: 'INIT' } } });
    state.runs++;
    f.reply({ jsonrpc: '2.0', id: m.id, result: { ran: state.runs } });
  });
  return { t, state };
}

test('a refusal before any work (not initialized) is not stored under the request_id: a retry runs, its result is kept', async () => {
  const a = await refusingAgent('/a5/bot');
  const c = await connectMqttClient(url('/a5/bot'), { baseDir: '/' });
  closers.push(() => c.close());
  const msg = { jsonrpc: '2.0' as const, id: 1, method: 'work' };
  const refused = (await c.request(msg, { requestId: 'r1', timeoutMs: 3000 })) as { error: { code: number } };
  assert.is(refused.error.code, -32600);
  a.state.ready = true;
  assert.equal(await c.request(msg, { requestId: 'r1', timeoutMs: 3000 }), { jsonrpc: '2.0', id: 1, result: { ran: 1 } }, 'the plain retry runs');
  assert.equal(await c.request(msg, { requestId: 'r1', timeoutMs: 3000 }), { jsonrpc: '2.0', id: 1, result: { ran: 1 } }, 'an executed result is kept');
  assert.is(a.state.runs, 1);
});

test('a refusal journaled before a restart does not answer a retry after it: the retry runs', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-mqtt-refusal-'));
  try {
    const msg = { jsonrpc: '2.0' as const, id: 2, method: 'work' };
    const first = await refusingAgent('/a6/bot', dir);
    const c = await connectMqttClient(url('/a6/bot'), { baseDir: '/' });
    closers.push(() => c.close());
    assert.is(((await c.request(msg, { requestId: 'r2', timeoutMs: 3000 })) as { error: { code: number } }).error.code, -32600);
    await first.t.close();
    const second = await refusingAgent('/a6/bot', dir);
    second.state.ready = true;
    assert.equal(await c.request(msg, { requestId: 'r2', timeoutMs: 3000 }), { jsonrpc: '2.0', id: 2, result: { ran: 1 } });
    assert.is(second.state.runs, 1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('3.1.1: agent notifications reach a watching client through the outbox', async () => {
  const { t } = await agent('/a3/bot');
  const c = await connectMqttClient(url('/a3/bot'), { baseDir: '/' });
  closers.push(() => c.close());
  const got: unknown[] = [];
  c.onNotification!((m) => got.push(m));
  await new Promise((r) => setTimeout(r, 100));
  t.notify({ jsonrpc: '2.0', method: 'claw.heartbeat', params: { state: 'READY' } });
  const until = Date.now() + 2000;
  while (got.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  assert.equal(got, [{ jsonrpc: '2.0', method: 'claw.heartbeat', params: { state: 'READY' } }]);
});

test('the broker drops a requester between CONNACK and its reply subscription (a restart): it reconnects and still gets its answer', async () => {
  await agent('/a5/bot');
  let dropped = 0;
  const original = broker.authorizeSubscribe;
  broker.authorizeSubscribe = (client, sub, done) => {
    if (client.id.startsWith('claw-send-') && dropped === 0) {
      dropped++;
      client.close(); // no SUBACK: the subscribe callback gets "Connection closed"
      return;
    }
    original.call(broker, client, sub, done);
  };
  try {
    const c = await connectMqttClient(url('/a5/bot'), { baseDir: '/', connectTimeoutMs: 5000 });
    closers.push(() => c.close());
    assert.is(dropped, 1, 'the first subscription was cut off');
    const r = await c.request({ jsonrpc: '2.0', id: 9, method: 'claw.status' }, { timeoutMs: 3000 });
    assert.equal((r as { result: { method: string } }).result.method, 'claw.status');
  } finally {
    broker.authorizeSubscribe = original;
  }
});

test('MQTT 5 against a 3.1.1-only broker: the connection is refused, not downgraded', async () => {
  const err = await connectMqttClient(`mqtt://127.0.0.1:${port}/a4/bot`, { baseDir: '/', connectTimeoutMs: 1500 } as never).then(
    () => undefined,
    (e: Error) => e,
  );
  assert.ok(err, 'connect must fail');
  assert.match(err!.message, /cannot connect to mqtt:\/\/127\.0\.0\.1:\d+\/a4\/bot/);
});

// Issue 5 asks for QoS 1 and presence as a retained status plus a Last Will: read off the wire at the broker.
test('QoS 1 on the wire: inbox subscription, request and reply publishes; presence retained; Last Will offline, retained', async () => {
  const subs: { client: string; topic: string; qos: number }[] = [];
  const pubs: { client: string; topic: string; qos: number; retain: boolean; payload: string }[] = [];
  const wills = new Map<string, { topic: string; qos: number; retain: boolean; payload: string }>();
  const onSub = (list: { topic: string; qos: number }[], client: { id: string } | null) => {
    for (const x of list) subs.push({ client: client?.id ?? '', topic: x.topic, qos: x.qos });
  };
  const onPub = (p: { topic: string; qos: number; retain: boolean; payload: Buffer | string }, client: { id: string } | null) => {
    if (client) pubs.push({ client: client.id, topic: p.topic, qos: p.qos, retain: p.retain, payload: String(p.payload) });
  };
  const onClient = (client: { id: string; will?: { topic: string; qos: number; retain: boolean; payload: Buffer | string } }) => {
    if (client.will) wills.set(client.id, { topic: client.will.topic, qos: client.will.qos, retain: client.will.retain, payload: String(client.will.payload) });
  };
  broker.on('subscribe', onSub as never);
  broker.on('publish', onPub as never);
  broker.on('client', onClient as never);
  try {
    await agent('/q1/bot');
    const c = await connectMqttClient(url('/q1/bot'), { baseDir: '/' });
    closers.push(() => c.close());
    const r = await c.request({ jsonrpc: '2.0', id: 9, method: 'claw.status' }, { timeoutMs: 3000 });
    assert.equal(r, { jsonrpc: '2.0', id: 9, result: { method: 'claw.status', n: 1 } });
    const agentId = 'claw-q1-bot';
    assert.equal(subs.filter((x) => x.client === agentId && x.topic === 'claw/q1/bot/inbox').map((x) => x.qos), [1]);
    const request = pubs.find((x) => x.client !== agentId && x.topic === 'claw/q1/bot/inbox');
    assert.ok(request, JSON.stringify(pubs));
    assert.is(request!.qos, 1);
    // aedes emits 'publish' once the message is forwarded, which can come after the client already has it.
    const until = Date.now() + 2000;
    while (!pubs.some((x) => x.client === agentId && x.payload.includes('"id":9')) && Date.now() < until) await new Promise((res) => setTimeout(res, 10));
    const reply = pubs.find((x) => x.client === agentId && x.payload.includes('"id":9'));
    assert.ok(reply, JSON.stringify(pubs));
    assert.is(reply!.qos, 1);
    const presence = pubs.filter((x) => x.client === agentId && x.topic === 'claw/q1/bot/status');
    assert.ok(presence.length >= 1, JSON.stringify(pubs));
    assert.equal([presence[0].qos, presence[0].retain, JSON.parse(presence[0].payload).status], [1, true, 'ready']);
    const will = wills.get(agentId);
    assert.ok(will, `no Last Will for ${agentId}: ${JSON.stringify([...wills.keys()])}`);
    assert.equal([will!.topic, will!.qos, will!.retain, JSON.parse(will!.payload).status], ['claw/q1/bot/status', 1, true, 'offline']);
  } finally {
    broker.removeListener('subscribe', onSub as never);
    broker.removeListener('publish', onPub as never);
    broker.removeListener('client', onClient as never);
  }
});

test.run();
