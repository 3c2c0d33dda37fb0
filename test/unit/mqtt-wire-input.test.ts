// Hostile MQTT input: a deeply nested envelope, reply routes the agent must not publish to (a NUL, 70 kB, another
// device's command topic). Each must neither stop the agent serving nor make it publish outside the `_reply` topics.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { InboundFrame } from '../../src/kernel/ports.ts';
import { decodeInbound } from '../../src/transports/mqtt/envelope.ts';
import { isPublishableTopic, isReplyTopic } from '../../src/transports/mqtt/topics.ts';
import { createMqttTransport } from '../../src/transports/mqtt/transport.ts';
import { connectMqttClient } from '../../src/transports/mqtt/client-mqtt.ts';
import { parseMqttUrl } from '../../src/transports/mqtt/endpoint.ts';
import { resolveMqttSettings } from '../../src/transports/mqtt/options.ts';
import { captureLogger } from './helpers/fakes.ts';
import { startAedes, type InProcessBroker } from './helpers/aedes.ts';

const enc = new TextEncoder();
const deepEnvelope = (levels: number) => `{"claw_mqtt":1,"reply_to":"claw/home/_reply/c1","request_id":"d1","message":${'['.repeat(levels)}${']'.repeat(levels)}}`;

test('a channel reply route is published only when the broker can take it (no NUL, wildcard, lone surrogate, or > 1,024 bytes)', () => {
  for (const ok of ['peer/replies', 'team/replies/alice', 'ü/ñ']) assert.ok(isPublishableTopic(ok), ok);
  for (const bad of ['', 'a\u0000b', 'a/+', 'a/#', 'a\ud800b', 'x'.repeat(1025)]) assert.not.ok(isPublishableTopic(bad), JSON.stringify(bad.slice(0, 20)));
});

test('a deeply nested envelope is not re-serialised: it stays a bare frame the router refuses for depth', () => {
  const r = decodeInbound(enc.encode(deepEnvelope(1_000_000)), undefined);
  assert.is(r.style, 'bare');
  assert.is(r.replyTo, undefined);
  const ok = decodeInbound(enc.encode(deepEnvelope(100)), undefined);
  assert.is(ok.style, 'envelope', 'nesting within the limit is still an envelope');
});

test('reply routes: only the swarm\'s _reply topics, valid UTF-8, no NUL or wildcard, at most 1024 bytes', () => {
  assert.ok(isReplyTopic('claw/home/_reply/claw-send-cli-1a2b3c4d', 'home'));
  assert.ok(isReplyTopic('acme/home/_reply/c1', 'home', 'acme'));
  for (const bad of [
    'homeassistant/switch/boiler/set',
    'claw/other/_reply/c1',
    'claw/home/_reply/',
    'claw/home/_reply/c1/more',
    'claw/home/_reply/c\u00001',
    'claw/home/_reply/+',
    'claw/home/_reply/#',
    'claw/home/_reply/\ud800x',
    `claw/home/_reply/${'x'.repeat(1100)}`,
    `claw/home/_reply/${'é'.repeat(600)}`,
  ])
    assert.not.ok(isReplyTopic(bad, 'home'), JSON.stringify(bad.slice(0, 40)));
});

let mqttd: InProcessBroker;
let broker: InProcessBroker['broker'];
let port = 0;
test.before(async () => {
  mqttd = await startAedes();
  ({ broker, port } = mqttd);
});
test.after(() => mqttd.close());

test('through the transport: hostile envelopes are refused or dropped, nothing leaves the _reply topics, the agent keeps serving', async () => {
  const url = `mqtt://127.0.0.1:${port}/home/kitchen?protocol=3.1.1`;
  const log = captureLogger();
  const t = await createMqttTransport({ settings: resolveMqttSettings(parseMqttUrl(url)), log });
  const c = await connectMqttClient(url, { baseDir: '/' });
  const published: string[] = [];
  const onPublish = (p: { topic: string }) => published.push(p.topic);
  broker.on('publish', onPublish);
  try {
    await t.ready(3000);
    const ran: string[] = [];
    t.start((f: InboundFrame) => {
      const text = (f.payload as { text?: string }).text ?? '';
      if (text.length > 10_000) return f.reply({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'too deep' } });
      const m = JSON.parse(text);
      ran.push(m.method);
      f.reply({ jsonrpc: '2.0', id: m.id, result: 'ok' });
    });
    const env = (replyTo: string, id: string) => JSON.stringify({ claw_mqtt: 1, reply_to: replyTo, request_id: id, message: { jsonrpc: '2.0', id: 1, method: `evil-${id}` } });
    for (const raw of [deepEnvelope(1_000_000), env('homeassistant/switch/boiler/set', 'a'), env('claw/home/_reply/x\u0000y', 'b'), env(`claw/home/_reply/${'x'.repeat(70_000)}`, 'c')])
      await c.sendRaw!(raw, { expectReply: false });
    assert.equal(await c.request({ jsonrpc: '2.0', id: 7, method: 'claw.status' }, { timeoutMs: 3000 }), { jsonrpc: '2.0', id: 7, result: 'ok' });
    assert.equal(ran, ['claw.status'], 'requests with a refused route are not run');
    const foreign = published.filter((p) => !p.startsWith('$SYS') && !/^claw\/home\/(kitchen\/(inbox|outbox|status)|_reply\/claw-send-)/.test(p));
    assert.equal(foreign, []);
    assert.is(log.entries.filter((r) => r.msg === 'mqtt request dropped: reply route is not a reply topic').length, 3);
  } finally {
    broker.removeListener('publish', onPublish);
    await c.close().catch(() => {});
    await t.close();
  }
});

test.run();
