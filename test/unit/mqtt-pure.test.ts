// The MQTT bridge's pure parts: topic names (profile §6.2 with `/`), backoff (profile §5), the MQTT 5 / 3.1.1
// message forms, URL and option parsing (no password in a URL, query over config), the reply cache, and the
// lru-cache bundle stub mqtt.js gets.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createRequire } from 'node:module';
import { agentTopics, presenceFilter, replyTopic, agentOfStatusTopic, isTopicSegment } from '../../src/transports/mqtt/topics.ts';
import { backoffDelay } from '../../src/transports/mqtt/backoff.ts';
import { decodeInbound, decodeReply, encodeReply, encodeRequest } from '../../src/transports/mqtt/envelope.ts';
import { parseMqttUrl, describeEndpoint } from '../../src/transports/mqtt/endpoint.ts';
import { resolveMqttSettings } from '../../src/transports/mqtt/options.ts';
import { ReplyCache } from '../../src/transports/mqtt/dedup.ts';
import { parsePresence } from '../../src/transports/mqtt/presence.ts';

const enc = new TextEncoder();

test('topics: claw/{swarm}/{agent}/{inbox|outbox|status}, presence wildcard, reply topics', () => {
  assert.equal(agentTopics('home', 'kitchen'), { inbox: 'claw/home/kitchen/inbox', outbox: 'claw/home/kitchen/outbox', status: 'claw/home/kitchen/status' });
  assert.equal(agentTopics('s', 'a', 'lab').inbox, 'lab/s/a/inbox');
  assert.is(presenceFilter('home'), 'claw/home/+/status');
  assert.is(replyTopic('home', 'c1'), 'claw/home/_reply/c1');
  assert.is(agentOfStatusTopic('claw/home/kitchen/status', 'home'), 'kitchen');
  assert.is(agentOfStatusTopic('claw/home/kitchen/inbox', 'home'), undefined);
  assert.is(agentOfStatusTopic('claw/other/kitchen/status', 'home'), undefined);
  for (const bad of ['', 'a/b', 'a+', '#', 'x\u0000']) assert.is(isTopicSegment(bad), false, bad);
});

test('backoff: min(1000 * 2^attempt, 30000) (runtime profile §5)', () => {
  assert.equal([0, 1, 2, 3, 4, 5, 6, 50, 5000].map((a) => backoffDelay(a)), [1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000, 30000]);
  assert.equal([0, 1, 2, 3].map((a) => backoffDelay(a, { initialDelayMs: 50, maxDelayMs: 200 })), [50, 100, 200, 200]);
});

test('MQTT 5 form: bare JSON-RPC payload, route in Response Topic + Correlation Data', () => {
  const out = encodeRequest({ jsonrpc: '2.0', id: 1, method: 'm' }, { replyTo: 'claw/s/_reply/c', requestId: 'r1' }, true);
  assert.is(out.payload, '{"jsonrpc":"2.0","id":1,"method":"m"}');
  assert.is(out.props!.responseTopic, 'claw/s/_reply/c');
  const inbound = decodeInbound(enc.encode(out.payload), out.props);
  assert.equal(inbound, { text: out.payload, replyTo: 'claw/s/_reply/c', requestId: 'r1', style: 'properties' });
  const reply = encodeReply('{"jsonrpc":"2.0","id":1,"result":2}', inbound);
  assert.is(reply.payload, '{"jsonrpc":"2.0","id":1,"result":2}');
  assert.equal(decodeReply(enc.encode(reply.payload), reply.props), { requestId: 'r1', text: reply.payload });
});

test('3.1.1 form: the route travels in an envelope; replies come back enveloped', () => {
  const out = encodeRequest({ jsonrpc: '2.0', id: 'a', method: 'm' }, { replyTo: 'claw/s/_reply/c', requestId: 'r2' }, false);
  assert.is(out.props, undefined);
  assert.equal(JSON.parse(out.payload), { claw_mqtt: 1, reply_to: 'claw/s/_reply/c', request_id: 'r2', message: { jsonrpc: '2.0', id: 'a', method: 'm' } });
  const inbound = decodeInbound(enc.encode(out.payload), undefined);
  assert.equal(inbound, { text: '{"jsonrpc":"2.0","id":"a","method":"m"}', replyTo: 'claw/s/_reply/c', requestId: 'r2', style: 'envelope' });
  const reply = encodeReply('{"jsonrpc":"2.0","id":"a","result":true}', inbound);
  assert.equal(JSON.parse(reply.payload), { claw_mqtt: 1, request_id: 'r2', message: { jsonrpc: '2.0', id: 'a', result: true } });
  assert.equal(decodeReply(enc.encode(reply.payload), undefined), { requestId: 'r2', text: '{"jsonrpc":"2.0","id":"a","result":true}' });
});

test('bare and malformed payloads reach the router unchanged (it answers parse errors)', () => {
  assert.equal(decodeInbound(enc.encode('{"jsonrpc":"2.0","method":"n"}'), undefined), { text: '{"jsonrpc":"2.0","method":"n"}', style: 'bare' });
  assert.equal(decodeInbound(enc.encode('{"claw_mqtt":1, nope'), undefined), { text: '{"claw_mqtt":1, nope', style: 'bare' });
  // The mark must be exactly 1 and a message present, or it is not our envelope.
  assert.is(decodeInbound(enc.encode('{"claw_mqtt":2,"message":{}}'), undefined).style, 'bare');
});

test('URL: broker, swarm, agent, defaults per scheme; passwords refused and never echoed', () => {
  const e = parseMqttUrl('mqtts://bot@broker.lan/home/kitchen?protocol=4');
  assert.equal({ tls: e.tls, host: e.host, port: e.port, swarm: e.swarm, agent: e.agent, username: e.username }, { tls: true, host: 'broker.lan', port: 8883, swarm: 'home', agent: 'kitchen', username: 'bot' });
  assert.is(parseMqttUrl('mqtt://127.0.0.1/home').port, 1883);
  assert.is(parseMqttUrl('mqtt://127.0.0.1/home').agent, undefined);
  assert.is(describeEndpoint(parseMqttUrl('mqtt://u@[::1]:1999/s/a?client_id=x')), 'mqtt://[::1]:1999/s/a');
  for (const bad of ['mqtt://u:hunter22@h/s/a', 'mqtt://h/s/a?password=hunter22']) {
    try {
      parseMqttUrl(bad);
      assert.unreachable(bad);
    } catch (err) {
      assert.match((err as Error).message, /password_ref/);
      assert.not.match((err as Error).message, /hunter22/);
    }
  }
  assert.throws(() => parseMqttUrl('http://h/s/a'), /mqtt:\/\/ or mqtts:\/\//);
  assert.throws(() => parseMqttUrl('mqtt://h/'), /\/\{swarm\}/);
  assert.throws(() => parseMqttUrl('mqtt://h/a/b/c'), /\/\{swarm\}/);
  assert.throws(() => parseMqttUrl('mqtt://h/s/a%2Bb'), /cannot be a topic level/);
});

test('options: defaults, then claw.runtime.yaml, then URL query', () => {
  const d = resolveMqttSettings(parseMqttUrl('mqtt://h/s/a'));
  assert.equal(
    { v: d.protocolVersion, exp: d.sessionExpirySeconds, ka: d.keepaliveSeconds, prefix: d.prefix, verify: d.tlsVerify, backoff: d.backoff },
    { v: 5, exp: 86400, ka: 30, prefix: 'claw', verify: true, backoff: { initialDelayMs: 1000, maxDelayMs: 30000 } },
  );
  const cfg = { protocol_version: 4 as const, client_id: 'cfg-id', password_ref: 'MQTT_PW', session_expiry_s: 60, reconnect: { initial_delay_ms: 10 } };
  const c = resolveMqttSettings(parseMqttUrl('mqtt://h/s/a'), cfg);
  assert.equal({ v: c.protocolVersion, id: c.clientId, pw: c.passwordRef, exp: c.sessionExpirySeconds, b: c.backoff }, { v: 4, id: 'cfg-id', pw: 'MQTT_PW', exp: 60, b: { initialDelayMs: 10, maxDelayMs: 30000 } });
  const q = resolveMqttSettings(parseMqttUrl('mqtt://h/s/a?protocol=5&client_id=url-id&session_expiry=5'), cfg);
  assert.equal({ v: q.protocolVersion, id: q.clientId, exp: q.sessionExpirySeconds }, { v: 5, id: 'url-id', exp: 5 });
  assert.throws(() => resolveMqttSettings(parseMqttUrl('mqtt://h/s/a?bogus=1')), /unknown MQTT URL parameter "bogus"/);
  assert.throws(() => resolveMqttSettings(parseMqttUrl('mqtt://h/s/a?protocol=3')), /protocol must be/);
  assert.throws(() => resolveMqttSettings(parseMqttUrl('mqtt://h/s/a?keepalive=-1')), /keepalive must be/);
});

test('reply cache: the first request runs; duplicates get the stored reply, or wait for it', () => {
  let now = 0;
  const cache = new ReplyCache(() => now, 1000);
  const got: string[][] = [];
  assert.is(cache.admit('r', (x) => got.push(x)), 'new');
  assert.is(cache.admit('r', (x) => got.push(x)), 'duplicate'); // still running: waits
  assert.equal(got, []);
  cache.complete('r', ['reply-1']);
  assert.equal(got, [['reply-1']]);
  assert.is(cache.admit('r', (x) => got.push(x)), 'duplicate');
  assert.equal(got, [['reply-1'], ['reply-1']]);
  now = 999;
  assert.is(cache.admit('other', () => {}), 'new');
  assert.is(cache.admit('r', () => {}), 'duplicate', 'inside the window');
  now = 1000 + 1001;
  assert.is(cache.admit('r', () => {}), 'new', 'after the window the id is new again (profile §5 MAY)');
});

test('reply cache: bounded', () => {
  const cache = new ReplyCache(() => 0, 60_000, 3);
  for (const k of ['a', 'b', 'c', 'd', 'e']) {
    cache.admit(k, () => {});
    cache.complete(k, [k]);
  }
  assert.ok(cache.size <= 4, `size ${cache.size}`);
  assert.is(cache.admit('a', () => {}), 'new', 'the oldest went first');
});

test('presence documents: parsed strictly', () => {
  assert.equal(parsePresence(enc.encode('{"status":"busy","agent":"a","swarm":"s","ts":"t","info":{"x":1}}')), { status: 'busy', agent: 'a', swarm: 's', ts: 't', info: { x: 1 } });
  assert.is(parsePresence(new Uint8Array()), undefined, 'a cleared retained message');
  assert.is(parsePresence(enc.encode('{"status":"sleeping","agent":"a","swarm":"s"}')), undefined);
  assert.is(parsePresence(enc.encode('not json')), undefined);
});

test('lru-cache bundle stub: the subset mqtt.js topic aliases use, with lru-cache semantics', () => {
  const { LRUCache } = createRequire(import.meta.url)(`${process.cwd()}/src/transports/mqtt/stubs/lru-cache.cjs`);
  const c = new LRUCache({ max: 2 });
  c.set(1, 'a');
  c.set(2, 'b');
  assert.is(c.get(1), 'a'); // 1 is now most recent
  c.set(3, 'c'); // evicts 2, the least recently used
  assert.is(c.get(2), undefined);
  assert.is(c.size, 2);
  assert.equal([...c.keys()], [3, 1], 'most recently used first');
  c.clear();
  assert.is(c.size, 0);
});

test.run();
