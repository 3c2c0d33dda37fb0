// The only module that loads mqtt.js, on first use: agents without MQTT never evaluate it (ARCHITECTURE: lazy heavy
// paths). We import the client class alone (`mqtt/lib/client`), not the package entry, and build the TCP/TLS
// stream ourselves: the entry's URL dispatcher pulls in ws, socks and the browser transports (~135 KB minified)
// that a Node/Bun TCP client never uses. build.config.mjs aliases readable-stream to node:stream and stubs
// `debug` and `worker-timers` (src/transports/mqtt/stubs); docs/size-budget.md has the measurements.
import type { IClientOptions, MqttClient } from 'mqtt';

export type StreamFactory = () => import('node:stream').Duplex;
export type MqttClientClass = new (streamBuilder: StreamFactory, options: IClientOptions) => MqttClient;

let cached: Promise<{ Client: MqttClientClass; net: typeof import('node:net'); tls: typeof import('node:tls') }> | undefined;

export function loadMqtt() {
  cached ??= Promise.all([import('mqtt/lib/client'), import('node:net'), import('node:tls')]).then(([m, net, tls]) => {
    // CJS interop differs between Node's loader and the bundle: the class is `exports.default` of the module.
    const any = m as unknown as { default?: { default?: unknown } | unknown; MqttClient?: unknown };
    const Client = [(any.default as { default?: unknown })?.default, any.default, any.MqttClient].find((c) => typeof c === 'function');
    if (!Client) throw new Error('mqtt/lib/client did not export the client class');
    return { Client: Client as MqttClientClass, net, tls };
  });
  return cached;
}
