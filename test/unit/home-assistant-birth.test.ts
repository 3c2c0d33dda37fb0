// A client that may publish on `<prefix>/status` cannot amplify its birth messages: a burst of `online`
// costs at most one republish now and one trailing republish, and a later single birth is still answered.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import mqtt from 'mqtt';
import { openHomeAssistantDevice } from '../../src/channels/home-assistant/device.ts';
import type { ResolvedManifest } from '../../src/manifest/resolved.ts';
import { captureLogger, tick, until } from './helpers/fakes.ts';
import { startAedes } from './helpers/aedes.ts';
import { systemClock } from '../../src/node/clock.ts';

test('a burst of 500 birth messages yields at most two republishes; a later birth still republishes', async () => {
  const mqttd = await startAedes();
  const { broker, port } = mqttd;
  let configs = 0;
  broker.on('publish', (packet, client) => {
    if (client?.id.startsWith('claw-ha-') && packet.topic.endsWith('/config')) configs++;
  });
  const gap = 400;
  const device = await openHomeAssistantDevice({
    channel: 'ha',
    manifest: { name: 'kitchen', claw: '0.3.0' } as ResolvedManifest,
    binding: { broker: `mqtt://127.0.0.1:${port}`, mqtt: { protocol_version: 4 } },
    log: captureLogger(),
    dataDir: '/',
    lifecycle: { state: 'READY' } as never,
    clock: systemClock,
    reannounceMs: gap,
  });
  const ha = mqtt.connect(`mqtt://127.0.0.1:${port}`, { protocolVersion: 4 });
  try {
    device.start(() => {});
    await new Promise((r) => ha.once('connect', r));
    await until(() => configs > 0, 3000);
    await tick(gap + 100);
    const perAnnounce = configs; // the connect's announcement
    configs = 0;
    for (let i = 0; i < 500; i++) ha.publish('homeassistant/status', 'online', { qos: 1 });
    await until(() => configs >= perAnnounce, 3000); // answered at once
    await tick(gap * 2 + 300); // and the trailing republish, if any
    assert.ok(configs <= 2 * perAnnounce, `${configs / perAnnounce} republishes for 500 births`);
    configs = 0;
    ha.publish('homeassistant/status', 'online', { qos: 1 });
    await until(() => configs === perAnnounce, 3000);
  } finally {
    ha.end(true);
    await device.close();
    await mqttd.close();
  }
});

test('the wall clock set back an hour (date -s, a bad NTP server): a birth message is still answered within the gap', async () => {
  const realNow = Date.now;
  const mqttd = await startAedes();
  const { broker, port } = mqttd;
  let configs = 0;
  broker.on('publish', (packet, client) => {
    if (client?.id.startsWith('claw-ha-') && packet.topic.endsWith('/config')) configs++;
  });
  const gap = 400;
  const device = await openHomeAssistantDevice({
    channel: 'ha',
    manifest: { name: 'kitchen', claw: '0.3.0' } as ResolvedManifest,
    binding: { broker: `mqtt://127.0.0.1:${port}`, mqtt: { protocol_version: 4 } },
    log: captureLogger(),
    dataDir: '/',
    lifecycle: { state: 'READY' } as never,
    clock: systemClock,
    reannounceMs: gap,
  });
  const ha = mqtt.connect(`mqtt://127.0.0.1:${port}`, { protocolVersion: 4 });
  try {
    device.start(() => {});
    await new Promise((r) => ha.once('connect', r));
    await until(() => configs > 0, 3000);
    const perAnnounce = configs;
    // The process's own wall clock steps back, as the device would see a step.
    Date.now = () => realNow() - 3_600_000;
    configs = 0;
    ha.publish('homeassistant/status', 'online', { qos: 1 });
    await until(() => configs >= perAnnounce, gap + 2000);
  } finally {
    Date.now = realNow;
    ha.end(true);
    await device.close();
    await mqttd.close();
  }
});

test.run();
