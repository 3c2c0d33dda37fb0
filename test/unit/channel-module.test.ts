// The channels module: queue channels bound in the runtime config, opened at STARTING and closed at
// STOPPING, over a real fs inbox and an in-process MQTT broker (aedes, 3.1.1), with a fake agent.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { channelsModule } from '../../src/runtime/channels-module.ts';
import { writeAtomic, timestampNs } from '../../src/transports/fs/layout.ts';
import { MqttConnection } from '../../src/transports/mqtt/connection.ts';
import { resolveMqttSettings } from '../../src/transports/mqtt/options.ts';
import { parseChannelMqttUrl, type MqttQueue } from '../../src/channels/queue-mqtt.ts';
import { CHANNEL_SCHEMES } from '../../src/runtime/schemes.ts';
import type { Session } from '../../src/kernel/agent.ts';
import type { RuntimeConfig } from '../../src/config/runtime-config.ts';
import type { ChannelAgent } from '../../src/channels/types.ts';
import { captureLogger, makeManifest, primitive, until } from './helpers/fakes.ts';
import { startAedes } from './helpers/aedes.ts';
import { findMosquitto, startMosquitto } from '../helpers/mosquitto.ts';

const queueChannel = (name: string, extra: Record<string, unknown> = {}) =>
  primitive('Channel', name, {
    type: 'queue',
    transport: 'polling',
    auth: { secret_ref: 'T' },
    access_control: { mode: 'allowlist', allowed_ids: ['alice'] },
    trigger: { queue_name: 'team.requests', max_parallel: 1, overlap_policy: 'queue' },
    ...extra,
  });
const session = (channels = [queueChannel('q')]) => ({ manifest: makeManifest(2, { channels }), abort: new AbortController() }) as unknown as Session;
const clock = { now: () => Date.now(), monotonic: () => performance.now(), setInterval: () => ({ cancel() {} }), setTimeout: () => ({ cancel() {} }) };

const core = { lifecycle: { state: 'READY' } } as never;

function fakeAgent() {
  const turns: string[] = [];
  const agent: ChannelAgent = {
    channelTurns: true,
    async turn(text) {
      turns.push(text);
      return { reply: `echo:${text}`, outcome: 'message', toolCalls: [], rejections: 0 };
    },
  };
  return { agent, turns };
}

function module(config: RuntimeConfig, dataDir: string, agent?: ChannelAgent, c: typeof clock = clock) {
  return channelsModule({ config, log: captureLogger(), clock: c, dataDir, getAgent: () => agent });
}

test('fs binding: a message file in the inbox gets the agent reply in outbox/, the file is archived', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'claw-chmod-'));
  const a = fakeAgent();
  const m = module({ channels: { q: { listen: 'fs:queue', fs: { poll_interval_ms: 20 } } } }, dataDir, a.agent);
  try {
    await m.start!(session(), core);
    const q = join(dataDir, 'queue');
    const send = (rid: string, from: string, text: string) =>
      writeAtomic(join(q, 'inbox'), `${timestampNs()}-${rid}.json`, JSON.stringify({ jsonrpc: '2.0', id: rid, method: 'channel.message', params: { from, text } }), false);
    send('r1', 'alice', 'hi');
    send('r2', 'mallory', 'hi');
    await until(() => readdirSync(join(q, 'outbox')).filter((f) => f.endsWith('.json')).length === 2, 3000);
    const replies = Object.fromEntries(readdirSync(join(q, 'outbox')).map((f) => [f.replace(/^\d+-/, ''), JSON.parse(readFileSync(join(q, 'outbox', f), 'utf8'))]));
    assert.equal(replies['r1.json'], { jsonrpc: '2.0', id: 'r1', result: { reply: 'echo:hi', outcome: 'message', tool_calls: 0 } });
    assert.is(replies['r2.json'].error.code, -32050);
    assert.equal(a.turns, ['hi']);
    await until(() => readdirSync(join(q, 'archive')).length === 2);
  } finally {
    await m.stop!(session());
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('STARTING fails with a clear error for a binding the manifest cannot honour', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'claw-chmod-'));
  const cases: [RuntimeConfig, Session, string][] = [
    [{ channels: { nope: { listen: 'fs:x' } } }, session(), 'claw.runtime.yaml channels.nope: the manifest has no Channel named "nope"'],
    [{ channels: { c: { listen: 'fs:x' } } }, session([primitive('Channel', 'c', { type: 'cli', transport: 'stdio', auth: { secret_ref: 'T' } })]), 'claw.runtime.yaml channels.c: listen: binds a Channel of type queue (this one is cli)'],
    [{ channels: { q: { listen: 'fs:x' } } }, session([queueChannel('q', { trigger: { max_parallel: 1 } })]), 'channel q: type queue needs trigger.queue_name (spec §5.3)'],
    [{ channels: { q: { telegram: {} } } }, session(), 'claw.runtime.yaml channels.q: telegram: binds a Channel of type telegram (this one is queue)'],
    [{ channels: { q: { home_assistant: { broker: 'mqtt://h' } } } }, session(), 'claw.runtime.yaml channels.q: home_assistant: binds a Channel of type custom (this one is queue)'],
    [{ channels: { q: { listen: 'fs:x', telegram: {} } } }, session(), 'claw.runtime.yaml channels.q: needs exactly one of listen: (queue), telegram:, home_assistant: (custom)'],
    [{ channels: { q: {} } }, session(), 'claw.runtime.yaml channels.q: needs exactly one of listen: (queue), telegram:, home_assistant: (custom)'],
  ];
  try {
    for (const [config, s, message] of cases) {
      const m = module(config, dataDir);
      let err: unknown;
      await m.start!(s, core).catch((e) => (err = e));
      assert.is((err as Error)?.message, message);
      assert.is(m.open.size, 0);
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('the channel table is a constant with fs:, mqtt: and mqtts: (no registration at start)', () => {
  assert.equal(Object.keys(CHANNEL_SCHEMES), ['fs', 'mqtt', 'mqtts']);
  assert.ok(Object.isFrozen(CHANNEL_SCHEMES));
});

test('MQTT URL: the path overrides the queue_name topic; passwords and wildcards refused', () => {
  assert.is(parseChannelMqttUrl('mqtt://h:1884', 'team.requests').topic, 'team.requests');
  assert.is(parseChannelMqttUrl('mqtt://h/a/b', 'x').topic, 'a/b');
  assert.is(parseChannelMqttUrl('mqtts://h', 'x').endpoint.port, 8883);
  assert.throws(() => parseChannelMqttUrl('mqtt://u:pw@h', 'x'), /password in the MQTT URL is refused/);
  assert.throws(() => parseChannelMqttUrl('mqtt://h/a/+', 'x'), /cannot be a topic name/);
});

test('MQTT binding (3.1.1 envelope): reply to the sender route, QoS 1 redelivery deduplicated, bare messages to {topic}/replies', async () => {
  const mqttd = await startAedes();
  const { port } = mqttd;
  const dataDir = mkdtempSync(join(tmpdir(), 'claw-chmod-'));
  const a = fakeAgent();
  const m = module({ channels: { q: { listen: `mqtt://127.0.0.1:${port}?protocol=3.1.1` } } }, dataDir, a.agent);
  const got: { topic: string; body: any }[] = [];
  let peer: MqttConnection | undefined;
  try {
    await m.start!(session(), core);
    const { endpoint } = parseChannelMqttUrl(`mqtt://127.0.0.1:${port}?protocol=3.1.1`, 'x');
    peer = await MqttConnection.open({
      settings: resolveMqttSettings(endpoint),
      clientId: 'peer-1',
      clean: true,
      log: captureLogger(),
      onMessage: (topic, payload) => got.push({ topic, body: JSON.parse(new TextDecoder().decode(payload)) }),
    });
    await peer.ready(3000);
    await peer.subscribe('me/replies');
    await peer.subscribe('team.requests/replies');
    const msg = (id: string, text: string) => ({ jsonrpc: '2.0', id, method: 'channel.message', params: { from: 'alice', text } });
    const env = { claw_mqtt: 1, reply_to: 'me/replies', request_id: 'rq-1', message: msg('1', 'one') };
    await peer.publish('team.requests', JSON.stringify(env));
    await peer.publish('team.requests', JSON.stringify(env)); // a redelivery / retry of the same request_id
    await peer.publish('team.requests', JSON.stringify(msg('2', 'bare')));
    await until(() => got.length === 3, 3000);
    assert.equal(a.turns, ['one', 'bare'], 'the repeated request_id ran once');
    const byTopic = got.map((g) => `${g.topic} ${g.body.request_id ?? '-'} ${JSON.stringify(g.body.message?.result ?? g.body.result)}`).sort();
    assert.equal(byTopic, [
      'me/replies rq-1 {"reply":"echo:one","outcome":"message","tool_calls":0}',
      'me/replies rq-1 {"reply":"echo:one","outcome":"message","tool_calls":0}',
      'team.requests/replies - {"reply":"echo:bare","outcome":"message","tool_calls":0}',
    ]);
  } finally {
    await peer?.close();
    await m.stop!(session());
    await mqttd.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});


test('MQTT binding: a retried request_id runs once across a forward wall-clock step (the window is monotonic)', async () => {
  const mqttd = await startAedes();
  const url = `mqtt://127.0.0.1:${mqttd.port}?protocol=3.1.1`;
  const dataDir = mkdtempSync(join(tmpdir(), 'claw-chmod-'));
  const a = fakeAgent();
  let step = 0;
  const m = module({ channels: { q: { listen: url } } }, dataDir, a.agent, { ...clock, now: () => Date.now() + step });
  const got: unknown[] = [];
  let peer: MqttConnection | undefined;
  try {
    await m.start!(session(), core);
    peer = await MqttConnection.open({ settings: resolveMqttSettings(parseChannelMqttUrl(url, 'x').endpoint), clientId: 'peer-2', clean: true, log: captureLogger(), onMessage: (_t, p) => got.push(p) });
    await peer.ready(3000);
    await peer.subscribe('me/replies');
    const env = { claw_mqtt: 1, reply_to: 'me/replies', request_id: 'rq-step', message: { jsonrpc: '2.0', id: '1', method: 'channel.message', params: { from: 'alice', text: 'once' } } };
    await peer.publish('team.requests', JSON.stringify(env));
    await until(() => got.length === 1, 3000);
    step = 3_600_000; // NTP steps the wall clock an hour forward
    await peer.publish('team.requests', JSON.stringify(env));
    await until(() => got.length === 2, 3000);
    assert.equal(a.turns, ['once'], 'the retry got the stored reply');
  } finally {
    await peer?.close();
    await m.stop!(session());
    await mqttd.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('from STOPPING on no new turn starts, even before the module stops', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'claw-chmod-'));
  const a = fakeAgent();
  const life = { lifecycle: { state: 'READY' } };
  const m = module({ channels: { q: { listen: 'fs:queue', fs: { poll_interval_ms: 20 } } } }, dataDir, a.agent);
  try {
    await m.start!(session(), life as never);
    life.lifecycle.state = 'STOPPING';
    const q = join(dataDir, 'queue');
    writeAtomic(join(q, 'inbox'), `${timestampNs()}-s1.json`, JSON.stringify({ jsonrpc: '2.0', id: 's1', method: 'channel.message', params: { from: 'alice', text: 'late' } }), false);
    await until(() => readdirSync(join(q, 'outbox')).filter((f) => f.endsWith('.json')).length === 1, 3000);
    const reply = JSON.parse(readFileSync(join(q, 'outbox', readdirSync(join(q, 'outbox'))[0]), 'utf8'));
    assert.equal(reply.error.data, { channel: 'q', reason: 'stopping' });
    assert.equal(a.turns, []);
  } finally {
    await m.stop!(session());
    rmSync(dataDir, { recursive: true, force: true });
  }
});


const HAVE_MOSQUITTO = findMosquitto() !== undefined;
if (!HAVE_MOSQUITTO) console.log('SKIP channel MQTT 5: mosquitto not found (scripts/test-deps.sh installs it)');
(HAVE_MOSQUITTO ? test : test.skip)('MQTT 5 (mosquitto): a message published while the agent is down is answered when it returns, on the response topic with its correlation data', async () => {
  const broker = await startMosquitto();
  const dataDir = mkdtempSync(join(tmpdir(), 'claw-chmod-'));
  const a = fakeAgent();
  const config: RuntimeConfig = { channels: { q: { listen: broker.url('') } } };
  const got: { topic: string; body: any; corr?: string }[] = [];
  let peer: MqttConnection | undefined;
  try {
    const first = module(config, dataDir, a.agent);
    await first.start!(session(), core); // subscribes on a persistent session
    await (first.open.get('q')!.transport as MqttQueue).ready(5000);
    const { endpoint } = parseChannelMqttUrl(broker.url(''), 'x');
    peer = await MqttConnection.open({
      settings: resolveMqttSettings(endpoint),
      clientId: 'peer-5',
      clean: true,
      log: captureLogger(),
      onMessage: (topic, payload, props) =>
        got.push({ topic, body: JSON.parse(new TextDecoder().decode(payload)), corr: props?.correlationData && new TextDecoder().decode(props.correlationData) }),
    });
    await peer.ready(5000);
    await peer.subscribe('peer-5/inbox');
    // A first round trip proves the channel's subscription is in place; then the agent goes away.
    const probe = { jsonrpc: '2.0', id: 8, method: 'channel.message', params: { from: 'alice', text: 'probe' } };
    await peer.publish('team.requests', JSON.stringify(probe), { props: { responseTopic: 'peer-5/inbox', correlationData: new TextEncoder().encode('corr-0') } });
    await until(() => got.length === 1, 5000);
    await first.stop!(session());
    got.length = 0;
    const msg = { jsonrpc: '2.0', id: 9, method: 'channel.message', params: { from: 'alice', text: 'while away' } };
    await peer.publish('team.requests', JSON.stringify(msg), { props: { responseTopic: 'peer-5/inbox', correlationData: new TextEncoder().encode('corr-1') } });
    const second = module(config, dataDir, a.agent);
    await second.start!(session(), core);
    try {
      await until(() => got.length === 1, 5000);
      assert.equal(got, [{ topic: 'peer-5/inbox', corr: 'corr-1', body: { jsonrpc: '2.0', id: 9, result: { reply: 'echo:while away', outcome: 'message', tool_calls: 0 } } }]);
      assert.equal(a.turns, ['probe', 'while away']);
    } finally {
      await second.stop!(session());
    }
  } finally {
    await peer?.close();
    await broker.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test.run();
