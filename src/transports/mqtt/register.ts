// The `mqtt:` / `mqtts:` entries of the scheme tables (src/transports/listen.ts, src/transports/client.ts). Each
// loads this folder lazily, and mqtt.js itself loads only when a connection opens (load.ts).
import type { TransportFactory } from '../listen.ts';
import type { ClientFactory } from '../client.ts';

export const mqttListenFactory: TransportFactory = async (entry, ctx) => (await import('./listen-mqtt.ts')).createMqttListener(entry, ctx);
export const mqttClientFactory: ClientFactory = async (uri, opts) => (await import('./client-mqtt.ts')).connectMqttClient(uri, opts);

/** Add the MQTT schemes to the given tables (the wiring the integrator applies, and the e2e entry uses). */
export function registerMqtt(listen: Record<string, TransportFactory>, client: Record<string, ClientFactory>): void {
  listen.mqtt = listen.mqtts = mqttListenFactory;
  client.mqtt = client.mqtts = mqttClientFactory;
}
