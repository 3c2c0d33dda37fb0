// Heartbeats while the broker is unreachable, against a real mosquitto: they are
// dropped, not held in mqtt.js's offline queue and replayed as a burst of stale messages at the reconnect; a
// reply to a request still works after the reconnect (docs/transports.md "MQTT", "Notifications while offline").
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { InboundFrame } from '../../src/kernel/ports.ts';
import { createMqttTransport } from '../../src/transports/mqtt/transport.ts';
import { connectMqttClient } from '../../src/transports/mqtt/client-mqtt.ts';
import { parseMqttUrl } from '../../src/transports/mqtt/endpoint.ts';
import { resolveMqttSettings } from '../../src/transports/mqtt/options.ts';
import { MAX_HELD_PUBLISHES, MqttConnection } from '../../src/transports/mqtt/connection.ts';
import { MqttSwarmLink } from '../../src/transports/mqtt/link.ts';
import { useMosquitto } from '../helpers/mosquitto.ts';
import { captureLogger, until } from './helpers/fakes.ts';

const mq = useMosquitto(test, 'mqtt-offline-notify');
const HAVE = mq.have;
const when = mq.when;
const track = mq.track;

const fast = (url: string) => {
  const s = resolveMqttSettings(parseMqttUrl(url));
  s.backoff = { initialDelayMs: 50, maxDelayMs: 200 };
  return s;
};
const heartbeat = (seq: number, phase: string) => ({ jsonrpc: '2.0' as const, method: 'claw.heartbeat', params: { seq, phase } });

for (const proto of ['5', '3.1.1']) {
  when(HAVE)(`MQTT ${proto}: notifications emitted while the broker is down are dropped, not replayed at the reconnect`, async () => {
    const swarm = `off${proto.replace('.', '')}`;
    const url = mq.broker().url(`/${swarm}/a1?protocol=${proto}`);
    const log = captureLogger();
    const t = track(await createMqttTransport({ settings: fast(url), log }));
    await t.ready(5000);
    t.start((f: InboundFrame) => {
      const m = 'text' in f.payload ? JSON.parse(f.payload.text) : undefined;
      if (m?.id !== undefined) f.reply({ jsonrpc: '2.0', id: m.id, result: { ok: m.method } });
    });

    // A watcher on the agent's outbox with a persistent session: it receives the replay live, or queued by the
    // broker if it reconnects after the agent does. Either way a stale heartbeat would show up here.
    const got: { seq: number; phase: string }[] = [];
    const watcher = track(
      await MqttConnection.open({
        settings: fast(mq.broker().url(`/${swarm}`)),
        clientId: `watch-${swarm}`,
        clean: false,
        log: captureLogger(),
        onMessage: (_topic, payload) => got.push(JSON.parse(new TextDecoder().decode(payload)).params),
      }),
    );
    await watcher.ready(5000);
    await watcher.subscribe(`claw/${swarm}/a1/outbox`);

    t.notify(heartbeat(0, 'before'));
    await until(() => got.some((g) => g.phase === 'before'), 3000);

    const N = 5000;
    await mq.broker().stop();
    let dropLogs: number;
    try {
      await until(() => log.entries.some((e) => e.msg === 'mqtt reconnect scheduled'), 3000);
      for (let i = 1; i <= N; i++) t.notify(heartbeat(i, 'offline'));
      // An approval request waits for an operator: kept (QoS 1, bounded hold) and delivered after the reconnect.
      t.notify({ jsonrpc: '2.0', method: 'claw.tool.approval_requested', params: { seq: -1, phase: 'approval' } });
      dropLogs = log.entries.filter((e) => e.msg === 'mqtt notifications dropped while disconnected').length;
    } finally {
      await mq.broker().start();
    }
    await t.ready(5000);
    await watcher.ready(5000);

    // A request's reply still works after the reconnect.
    const c = track(await connectMqttClient(url, { baseDir: '/' }));
    const r = await c.request({ jsonrpc: '2.0', id: 9, method: 'after' }, { timeoutMs: 5000 });
    assert.equal(r, { jsonrpc: '2.0', id: 9, result: { ok: 'after' } });

    // Connected again, notifications flow.
    t.notify(heartbeat(N + 1, 'after'));
    await until(() => got.some((g) => g.phase === 'after'), 3000);
    await new Promise((res) => setTimeout(res, 300));
    assert.is(got.filter((g) => g.phase === 'offline').length, 0, 'stale heartbeats replayed after the reconnect');
    assert.is(got.filter((g) => g.phase === 'approval').length, 1, 'the approval request sent while offline arrived once');
    // Dropped while offline, counted, and logged once for the outage, not once per message.
    assert.is(dropLogs, 1);
    const reconnected = log.entries.find((e) => e.msg === 'mqtt connected' && e.fields?.dropped_notifications !== undefined);
    assert.is(reconnected?.fields?.dropped_notifications, N);
  });
}

when(HAVE)('QoS 1 publishes waiting while disconnected are bounded: past the limit they fail at once, logged once', async () => {
  const log = captureLogger();
  const conn = track(await MqttConnection.open({ settings: fast(mq.broker().url('/held')), clientId: 'held-1', clean: true, log, onMessage: () => {} }));
  await conn.ready(5000);
  await mq.broker().stop();
  let waiting: Promise<PromiseSettledResult<void>[]>;
  let refused: PromiseSettledResult<void>[];
  try {
    await until(() => !conn.connected, 3000);
    waiting = Promise.allSettled(Array.from({ length: MAX_HELD_PUBLISHES }, (_, i) => conn.publish('claw/held/x', String(i))));
    refused = await Promise.allSettled(Array.from({ length: 50 }, () => conn.publish('claw/held/x', 'over')));
  } finally {
    await mq.broker().start();
  }
  assert.ok(refused.every((r) => r.status === 'rejected' && (r.reason as { code?: string }).code === 'unreachable'));
  assert.is(log.entries.filter((e) => e.msg === 'mqtt publishes refused while disconnected: too many waiting').length, 1);
  // Those within the limit keep their delivery: acknowledged after the reconnect.
  const held = await waiting;
  assert.ok(held.every((r) => r.status === 'fulfilled'));
  assert.is(log.entries.find((e) => e.msg === 'mqtt connected' && e.fields?.refused_publishes !== undefined)?.fields?.refused_publishes, 50);
});

when(HAVE)('QoS 1 publishes waiting while disconnected are bounded in bytes too: 8 MiB, not 1000 x 256 KB', async () => {
  const log = captureLogger();
  const conn = track(await MqttConnection.open({ settings: fast(mq.broker().url('/heldb')), clientId: 'held-b', clean: true, log, onMessage: () => {} }));
  await conn.ready(5000);
  await mq.broker().stop();
  let waiting: Promise<PromiseSettledResult<void>[]>;
  let refused: PromiseSettledResult<void>[] | 'still waiting';
  let pending: { publishes: number; bytes: number } | undefined;
  try {
    await until(() => !conn.connected, 3000);
    const big = 'x'.repeat(256 * 1024);
    const all = Array.from({ length: 40 }, () => conn.publish('claw/heldb/x', big));
    pending = conn.pending;
    // 31 fit beside the topic bytes; the 32nd would pass 8 MiB.
    waiting = Promise.allSettled(all.slice(0, 31));
    // Refused at once; kept (unbounded in bytes), they would only settle after the reconnect.
    refused = await Promise.race([Promise.allSettled(all.slice(31)), new Promise<'still waiting'>((r) => setTimeout(() => r('still waiting'), 1000))]);
  } finally {
    await mq.broker().start();
  }
  assert.ok(refused !== 'still waiting' && refused.every((r) => r.status === 'rejected' && (r.reason as { code?: string }).code === 'unreachable'), 'refused past 8 MiB');
  assert.ok(pending && pending.bytes <= 8 * 1024 * 1024, `${pending?.bytes} bytes held`);
  assert.is(pending?.publishes, 31);
  assert.ok((await waiting).every((r) => r.status === 'fulfilled'), 'those within the bound are delivered after the reconnect');
});

when(HAVE)('a request to a peer that times out while the broker is away is never published after the reconnect', async () => {
  const swarm = 'gaveup';
  // The peer: a persistent session on its inbox, so a request published at the reconnect would reach it.
  const got: string[] = [];
  const peer = track(
    await MqttConnection.open({
      settings: fast(mq.broker().url(`/${swarm}`)),
      clientId: `peer-${swarm}`,
      clean: false,
      log: captureLogger(),
      onMessage: (_t, payload) => got.push(new TextDecoder().decode(payload)),
    }),
  );
  await peer.ready(5000);
  await peer.subscribe(`claw/${swarm}/p1/inbox`);
  const conn = track(await MqttConnection.open({ settings: fast(mq.broker().url(`/${swarm}`)), clientId: `req-${swarm}`, clean: false, log: captureLogger(), onMessage: (t, p, props) => void link.handle(t, p, props) }));
  const link = new MqttSwarmLink({ connection: conn, swarm, prefix: 'claw', protocolVersion: 5, clientId: `req-${swarm}` });
  await conn.ready(5000);
  await link.start();
  await mq.broker().stop();
  let timedOut: unknown;
  let kept: Promise<void>;
  try {
    await until(() => !conn.connected, 3000);
    timedOut = await link.request('p1', { jsonrpc: '2.0', id: 1, method: 'stale' }, { timeoutMs: 200 }).catch((e) => e);
    // A notification has no caller to give up: it still waits for the broker and is delivered.
    kept = link.notify('p1', { jsonrpc: '2.0', method: 'kept' });
  } finally {
    await mq.broker().start();
  }
  assert.is((timedOut as { code?: string }).code, 'timeout');
  await kept;
  await until(() => got.some((g) => g.includes('"kept"')), 5000);
  await new Promise((r) => setTimeout(r, 300));
  assert.is(got.filter((g) => g.includes('"stale"')).length, 0, 'the peer received a request whose caller had timed out');
  assert.is(conn.pending.publishes, 0);
});

test.run();
