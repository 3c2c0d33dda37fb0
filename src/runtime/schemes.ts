// Every URI scheme the runtime serves, in one place: the transports it listens on (`--listen`, claw.runtime.yaml
// `transports:`), the ones `claw send` and peers connect to, the swarm buses (`swarm.bus`) and where queue
// channels listen (`channels:`). Constants: nothing adds to them at run time. Each entry loads its adapter on
// first use, so an agent that only speaks stdio never evaluates fs or MQTT code (mqtt.js itself loads only when
// a connection opens: src/transports/mqtt/load.ts). A new scheme is one line in each table it belongs to.
import type { TransportFactory } from '../transports/listen.ts';
import type { ClientFactory } from '../transports/client.ts';
import type { BusFactory } from '../swarm/open-bus.ts';
import { fsBus, memoryBus } from '../swarm/open-bus.ts';
import type { ChannelListenerFactory } from '../channels/listeners.ts';

/** Scheme → factory; frozen so nothing patches it, and without a prototype so `constructor:` is no scheme. */
export type SchemeTable<F> = Readonly<Record<string, F>>;

const schemeTable = <F>(entries: Record<string, F>): SchemeTable<F> => Object.freeze(Object.assign(Object.create(null) as Record<string, F>, entries));

const httpListen: TransportFactory = async (entry, ctx) => (await import('../transports/http/listen-http.ts')).createHttpListener(entry, ctx);
const httpClient: ClientFactory = async (uri, opts) => (await import('../transports/http/client-http.ts')).connectHttpClient(uri, opts);
const mqttListen: TransportFactory = async (entry, ctx) => (await import('../transports/mqtt/listen-mqtt.ts')).createMqttListener(entry, ctx);
const mqttClient: ClientFactory = async (uri, opts) => (await import('../transports/mqtt/client-mqtt.ts')).connectMqttClient(uri, opts);
const mqttBus: BusFactory = async (uri, cfg, c) => (await import('../swarm/mqtt-bus.ts')).openMqttBus(uri, cfg, c);
const mqttChannel: ChannelListenerFactory = async (b, c) =>
  (await import('../channels/queue-mqtt.ts')).openMqttQueue(c.channel, c.queueName, b, { log: c.log, baseDir: c.baseDir, secrets: c.secrets, monotonic: c.monotonic, maxFrameBytes: c.maxFrameBytes });

/** Transports a runtime serves besides stdio (spec §9.2, runtime profile §6; docs/transports.md). */
export const LISTEN_SCHEMES: SchemeTable<TransportFactory> = schemeTable({
  fs: async (entry, ctx) => (await import('../transports/fs/listen-fs.ts')).createFsListener(entry, ctx),
  http: httpListen,
  https: httpListen,
  mqtt: mqttListen,
  mqtts: mqttListen,
});

/** The client side: `claw send <uri>` (docs/transports.md). */
export const CLIENT_SCHEMES: SchemeTable<ClientFactory> = schemeTable({
  fs: async (uri, opts) => (await import('../transports/fs/client-fs.ts')).connectFsClient(uri, opts),
  http: httpClient,
  https: httpClient,
  mqtt: mqttClient,
  mqtts: mqttClient,
});

/** claw.runtime.yaml `swarm.bus` (docs/swarm.md); `memory` is also `backend: in-process`. */
export const BUS_SCHEMES: SchemeTable<BusFactory> = schemeTable({
  memory: memoryBus,
  fs: fsBus,
  mqtt: mqttBus,
  mqtts: mqttBus,
});

/** Where a queue channel's binding opens (claw.runtime.yaml `channels:`, docs/channels.md). */
export const CHANNEL_SCHEMES: SchemeTable<ChannelListenerFactory> = schemeTable({
  fs: async (b, c) => (await import('../channels/queue-fs.ts')).openFsQueue(c.channel, b, { baseDir: c.baseDir, log: c.log, clock: { now: c.now, monotonic: c.monotonic }, maxFrameBytes: c.maxFrameBytes }),
  mqtt: mqttChannel,
  mqtts: mqttChannel,
});
