// The `mqtt:` / `mqtts:` entries of the channel listener table (./listeners.ts). Separate so that
// dist/claw.mjs carries mqtt.js only once the size budget takes it (docs/size-budget.md), as
// src/transports/mqtt/register.ts and src/swarm/mqtt-register.ts do for the transport and the bus.
import type { ChannelListenerFactory } from './listeners.ts';

export const mqttChannelFactory: ChannelListenerFactory = async (b, c) =>
  (await import('./queue-mqtt.ts')).openMqttQueue(c.channel, c.queueName, b, { log: c.log, baseDir: c.baseDir, secrets: c.secrets, now: c.now, maxFrameBytes: c.maxFrameBytes });

export function registerMqttChannels(table: Record<string, ChannelListenerFactory>): void {
  table.mqtt = table.mqtts = mqttChannelFactory;
}
