// MQTT 5 Maximum Packet Size (§3.1.2.11.4): the agent tells the broker how large a message it accepts, so a
// 150 MB publish is discarded by the broker instead of being buffered and parsed by the agent. A frame just over
// the frame limit still arrives and is answered "oversize".
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rmSync } from 'node:fs';
import type { InboundFrame } from '../../src/kernel/ports.ts';
import { createMqttTransport } from '../../src/transports/mqtt/transport.ts';
import { connectMqttClient } from '../../src/transports/mqtt/client-mqtt.ts';
import { parseMqttUrl } from '../../src/transports/mqtt/endpoint.ts';
import { resolveMqttSettings } from '../../src/transports/mqtt/options.ts';
import { findMosquitto, startMosquitto } from '../helpers/mosquitto.ts';
import { captureLogger } from './helpers/fakes.ts';

if (!findMosquitto()) console.log('SKIP mqtt-packet-size: mosquitto not found (scripts/test-deps.sh installs it)');
else {
  test('MQTT 5: a message far over the frame limit never reaches the agent; one just over it is answered oversize', async () => {
    const broker = await startMosquitto();
    const url = broker.url('/size/agent');
    const t = await createMqttTransport({ settings: resolveMqttSettings(parseMqttUrl(url)), log: captureLogger(), maxFrameBytes: 4096, drainMs: 1000 });
    const c = await connectMqttClient(url, { baseDir: '/' });
    try {
      await t.ready(5000);
      const frames: InboundFrame['payload'][] = [];
      t.start((f) => {
        frames.push(f.payload);
        f.reply({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'oversize' } });
      });
      await c.sendRaw!(`"${'x'.repeat(2_000_000)}"`, { expectReply: false });
      const r = (await c.sendRaw!(`"${'y'.repeat(5000)}"`, { timeoutMs: 5000 })) as { error: { code: number } };
      assert.is(r.error.code, -32600);
      assert.equal(frames, [{ error: 'oversize', bytes: 5002, limit: 4096 }], 'only the frame within the packet size is delivered');
    } finally {
      await c.close().catch(() => {});
      await t.close();
      await broker.stop();
      rmSync(broker.dir, { recursive: true, force: true });
    }
  });
  test.run();
}
