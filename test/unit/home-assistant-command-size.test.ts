// A Home Assistant command is bounded by its bytes before any decoding or per-character work: a 100 MB command
// must not cost seconds of CPU and gigabytes of memory before it is ignored.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import mqtt from 'mqtt';
import { openHomeAssistantDevice } from '../../src/channels/home-assistant/device.ts';
import type { ResolvedManifest } from '../../src/manifest/resolved.ts';
import { captureLogger, until } from './helpers/fakes.ts';
import { startAedes } from './helpers/aedes.ts';
import { systemClock } from '../../src/node/clock.ts';

test('an oversized command is ignored by its byte length, unread, and later commands still arrive', async () => {
  const mqttd = await startAedes();
  const { port } = mqttd;
  const log = captureLogger();
  const device = await openHomeAssistantDevice({
    channel: 'ha',
    manifest: { name: 'kitchen', claw: '0.3.0' } as ResolvedManifest,
    binding: { broker: `mqtt://127.0.0.1:${port}`, mqtt: { protocol_version: 4 } },
    log,
    dataDir: '/',
    lifecycle: { state: 'READY' } as never,
    clock: systemClock,
  });
  const pub = mqtt.connect(`mqtt://127.0.0.1:${port}`, { protocolVersion: 4 });
  try {
    const texts: string[] = [];
    device.start((f) => texts.push(JSON.parse((f.payload as { text: string }).text).params.text));
    await new Promise((r) => pub.once('connect', r));
    await new Promise((r) => setTimeout(r, 200));
    pub.publish('claw/kitchen/command', Buffer.alloc(20_000_000, 0x61), { qos: 1 });
    pub.publish('claw/kitchen/command', 'turn on the light', { qos: 1 });
    await until(() => texts.length > 0, 5000);
    assert.equal(texts, ['turn on the light']);
    const ignored = log.entries.find((e) => e.msg.startsWith('home assistant command ignored'));
    assert.is(ignored?.fields?.bytes, 20_000_000, 'refused by its byte length');
  } finally {
    pub.end(true);
    await device.close();
    await mqttd.close();
  }
});

test.run();
