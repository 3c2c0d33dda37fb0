// The shared transport contract (test/unit/transport-contract.ts) against the MQTT transport through mosquitto
// (MQTT 5). Each subject gets its own agent name so no retained or queued message leaks between cases.
import { test } from 'uvu';
import { transportContract, type ContractPeer } from './transport-contract.ts';
import { createMqttTransport } from '../../src/transports/mqtt/transport.ts';
import { connectMqttClient } from '../../src/transports/mqtt/client-mqtt.ts';
import { parseMqttUrl } from '../../src/transports/mqtt/endpoint.ts';
import { resolveMqttSettings } from '../../src/transports/mqtt/options.ts';
import { findMosquitto, startMosquitto, type Mosquitto } from '../helpers/mosquitto.ts';
import { captureLogger } from './helpers/fakes.ts';

if (!findMosquitto()) {
  console.log('SKIP mqtt-contract: mosquitto not found (scripts/test-deps.sh installs it)');
} else {
  let broker: Mosquitto | undefined;
  let n = 0;
  const MAX = 4096;
  transportContract(
    'mqtt',
    async () => {
      broker ??= await startMosquitto();
      const url = broker.url(`/contract/agent${++n}`);
      const transport = await createMqttTransport({ settings: resolveMqttSettings(parseMqttUrl(url)), log: captureLogger(), maxFrameBytes: MAX, drainMs: 3000 });
      await transport.ready(5000);
      const peers: ContractPeer[] = [];
      return {
        transport,
        maxFrameBytes: MAX,
        async peer() {
          const c = await connectMqttClient(url, { baseDir: '/' });
          const notifications: any[] = [];
          c.onNotification!((m) => notifications.push(m));
          // Let the outbox subscription reach the broker before the suite publishes a notification.
          await new Promise((r) => setTimeout(r, 50));
          const p: ContractPeer = {
            notifications,
            send: (text, o) => c.sendRaw!(text, { timeoutMs: o?.timeoutMs, expectReply: o?.expectReply }),
            close: () => c.close(),
          };
          peers.push(p);
          return p;
        },
        async cleanup() {
          for (const p of peers.splice(0)) await p.close().catch(() => {});
        },
      };
    },
    { multiSender: true, deliveryMs: 3000 },
  );
  test.after(async () => {
    await broker?.stop();
  });
}
test.run();
