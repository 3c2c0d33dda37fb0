// mqtt-publish / mqtt-read (docs/tools.md): against a real broker (aedes, in this process). Allowed topics
// publish and read back the retained value; a topic outside the allowlist, a wildcard, a broker host the
// sandbox does not allow, a sandbox that denies the network, and a missing configuration are refused.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mqttToolPort } from '../../src/tools/builtins/mqtt-port.ts';
import { mqttPublish } from '../../src/tools/builtins/mqtt-publish.ts';
import { mqttRead } from '../../src/tools/builtins/mqtt-read.ts';
import { topicMatches } from '../../src/tools/builtins/mqtt-topics.ts';
import { SandboxViolation } from '../../src/tools/types.ts';
import { runtimeConfigSchema } from '../../src/config/runtime-config.ts';
import * as v from 'valibot';
import { startAedes } from './helpers/aedes.ts';
import { createServer, type Socket } from 'node:net';

const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent } as any;

const ctx = (mqtt: any, network: any = { mode: 'allowlist', allowed_hosts: ['127.0.0.1'] }) =>
  ({ signal: new AbortController().signal, sandbox: { level: 'none', capabilities: { network } }, cwd: '/', run: null as any, fetch: null as any, mqtt }) as any;

async function refused(p: unknown, rule: string) {
  try {
    await p;
  } catch (e) {
    assert.instance(e, SandboxViolation);
    assert.is((e as SandboxViolation).rule, rule);
    return;
  }
  assert.unreachable(`expected a ${rule} violation`);
}

test('topic filters: + one level, # the rest, $ topics not matched by a leading wildcard', () => {
  assert.ok(topicMatches('home/+/set', 'home/lamp/set'));
  assert.not.ok(topicMatches('home/+/set', 'home/lamp/x/set'));
  assert.ok(topicMatches('home/#', 'home'));
  assert.ok(topicMatches('home/#', 'home/a/b'));
  assert.not.ok(topicMatches('home/lamp', 'home/lamp/set'));
  assert.not.ok(topicMatches('#', '$SYS/broker'));
});

test('mqtt_tools in claw.runtime.yaml: filters are checked', () => {
  const ok = v.safeParse(runtimeConfigSchema, { mqtt_tools: { broker: 'mqtt://b:1883', publish: ['home/+/set', 'zigbee2mqtt/#'], read: ['#'] } });
  assert.ok(ok.success);
  const bad = v.safeParse(runtimeConfigSchema, { mqtt_tools: { broker: 'mqtt://b:1883', publish: ['home/lamp#'] } });
  assert.not.ok(bad.success);
});

test('mqtt-publish and mqtt-read: allowed topics work, everything else is refused', async () => {
  const b = await startAedes();
  try {
    const port = mqttToolPort({ broker: b.url, mqtt: { protocol_version: 4 }, publish: ['home/+/set'], read: ['home/#'] }, { baseDir: '/', log: silent });
    const published = await mqttPublish.run({ topic: 'home/lamp/set', payload: 'ON', retain: true }, ctx(port));
    assert.is((published as any).content[0].text, 'published 2 bytes to home/lamp/set (retained)');
    const read = await mqttRead.run({ topic: 'home/lamp/set' }, ctx(port));
    assert.is((read as any).content[0].text, 'ON');
    const none = await mqttRead.run({ topic: 'home/other' }, ctx({ ...port, config: { ...port.config, read_timeout_ms: 200 }, readRetained: port.readRetained, publish: port.publish, host: port.host }));
    assert.is((none as any).content[0].text, 'no retained value on home/other');

    await refused(mqttPublish.run({ topic: 'home/lamp', payload: 'x' }, ctx(port)), 'mqtt.topic');
    await refused(mqttPublish.run({ topic: 'alarm/disarm', payload: 'x' }, ctx(port)), 'mqtt.topic');
    await refused(mqttRead.run({ topic: 'secrets/door' }, ctx(port)), 'mqtt.topic');
    const wildcard = await mqttPublish.run({ topic: 'home/+/set', payload: 'x' }, ctx(port));
    assert.ok((wildcard as any).isError);
    await refused(mqttPublish.run({ topic: 'home/lamp/set', payload: 'x' }, ctx(port, { mode: 'deny' })), 'network.mode');
    await refused(mqttPublish.run({ topic: 'home/lamp/set', payload: 'x' }, ctx(port, { mode: 'allowlist', allowed_hosts: ['broker.example'] })), 'network.host');
    await refused(mqttPublish.run({ topic: 'home/lamp/set', payload: 'x' }, ctx(undefined)), 'mqtt.unconfigured');
    const big = await mqttPublish.run({ topic: 'home/lamp/set', payload: 'x'.repeat(70_000) }, ctx(port));
    assert.match((big as any).content[0].text, /exceeds 65536/);
    // Nothing refused reached the broker: the retained value is still the allowed one.
    assert.is(((await mqttRead.run({ topic: 'home/lamp/set' }, ctx(port))) as any).content[0].text, 'ON');
  } finally {
    await b.close();
  }
});

test('a broker that accepts the connection and then never acknowledges: the call ends with a clear error, not never', async () => {
  // CONNACK (MQTT 3.1.1, accepted) to every CONNECT, and nothing else: no PUBACK, no SUBACK.
  const socks = new Set<Socket>();
  const server = createServer((c) => {
    socks.add(c);
    c.on('error', () => {});
    c.on('data', (d) => d[0] >> 4 === 1 && c.write(Buffer.from([0x20, 0x02, 0x00, 0x00])));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `mqtt://127.0.0.1:${(server.address() as { port: number }).port}`;
  try {
    const port = mqttToolPort({ broker: url, mqtt: { protocol_version: 4 }, publish: ['home/#'], read: ['home/#'] }, { baseDir: '/', log: silent, brokerWaitMs: 300 });
    const outcome = (p: unknown) =>
      Promise.race([Promise.resolve(p).then(() => 'answered', (e: Error) => e.message), new Promise((r) => setTimeout(() => r('still waiting after 5 s'), 5000))]);
    const t0 = Date.now();
    assert.is(await outcome(mqttPublish.run({ topic: 'home/lamp/set', payload: 'ON' }, ctx(port))), 'no PUBACK from the MQTT broker within 300 ms: the message may not have arrived');
    assert.is(await outcome(mqttRead.run({ topic: 'home/lamp' }, ctx(port))), 'no SUBACK from the MQTT broker within 300 ms');
    assert.ok(Date.now() - t0 < 4000, `${Date.now() - t0} ms`);
  } finally {
    for (const c of socks) c.destroy();
    await new Promise((r) => server.close(r));
  }
});

test.run();
