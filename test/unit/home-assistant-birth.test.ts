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

const GAP = 400;

/**
 * A broker, the device on it (re-announcing at most every GAP ms) and a Home Assistant client, both connected;
 * `configs()` counts the device's config publishes since the last `reset()`, `perAnnounce` per announcement.
 */
async function setup() {
  const mqttd = await startAedes();
  const { broker, port } = mqttd;
  let configs = 0;
  broker.on('publish', (packet, client) => {
    if (client?.id.startsWith('claw-ha-') && packet.topic.endsWith('/config')) configs++;
  });
  const device = await openHomeAssistantDevice({
    channel: 'ha',
    manifest: { name: 'kitchen', claw: '0.3.0' } as ResolvedManifest,
    binding: { broker: `mqtt://127.0.0.1:${port}`, mqtt: { protocol_version: 4 } },
    log: captureLogger(),
    dataDir: '/',
    lifecycle: { state: 'READY' } as never,
    clock: systemClock,
    reannounceMs: GAP,
  });
  const ha = mqtt.connect(`mqtt://127.0.0.1:${port}`, { protocolVersion: 4 });
  const close = async () => {
    ha.end(true);
    await device.close();
    await mqttd.close();
  };
  try {
    device.start(() => {});
    await new Promise((r) => ha.once('connect', r));
    await until(() => configs > 0, 3000);
  } catch (e) {
    await close();
    throw e;
  }
  return { ha, perAnnounce: configs, configs: () => configs, reset: () => (configs = 0), close };
}

test('a burst of 500 birth messages yields at most two republishes; a later birth still republishes', async () => {
  const s = await setup();
  try {
    await tick(GAP + 100);
    const perAnnounce = s.configs(); // the connect's announcement
    s.reset();
    for (let i = 0; i < 500; i++) s.ha.publish('homeassistant/status', 'online', { qos: 1 });
    await until(() => s.configs() >= perAnnounce, 3000); // answered at once
    await tick(GAP * 2 + 300); // and the trailing republish, if any
    assert.ok(s.configs() <= 2 * perAnnounce, `${s.configs() / perAnnounce} republishes for 500 births`);
    s.reset();
    s.ha.publish('homeassistant/status', 'online', { qos: 1 });
    await until(() => s.configs() === perAnnounce, 3000);
  } finally {
    await s.close();
  }
});

test('the wall clock set back an hour (date -s, a bad NTP server): a birth message is still answered within the gap', async () => {
  const realNow = Date.now;
  const s = await setup();
  try {
    // The process's own wall clock steps back, as the device would see a step.
    Date.now = () => realNow() - 3_600_000;
    s.reset();
    s.ha.publish('homeassistant/status', 'online', { qos: 1 });
    await until(() => s.configs() >= s.perAnnounce, GAP + 2000);
  } finally {
    Date.now = realNow;
    await s.close();
  }
});

test.run();
