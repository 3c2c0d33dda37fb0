// Where a queue channel's binding opens, by URI scheme (docs/channels.md). `fs:` is built in; `mqtt:` /
// `mqtts:` are added by registerMqttChannels (./mqtt-register.ts), the same way the MQTT transport and
// the swarm's MQTT bus are: dist/claw.mjs carries mqtt.js only once the size budget takes it
// (docs/size-budget.md).
import type { Logger, Transport } from '../kernel/ports.ts';
import type { SecretResolver } from '../kernel/secrets.ts';
import type { ChannelBinding } from './config.ts';

export interface ChannelListenContext {
  channel: string;
  queueName: string;
  log: Logger;
  /** Relative `fs:` paths and MQTT CA files resolve against it (data_dir). */
  baseDir: string;
  secrets?: SecretResolver;
  now: () => number;
  maxFrameBytes?: number;
}

export type ChannelListenerFactory = (b: ChannelBinding, ctx: ChannelListenContext) => Promise<Transport>;

export const CHANNEL_LISTENERS: Record<string, ChannelListenerFactory> = {
  fs: async (b, c) => (await import('./queue-fs.ts')).openFsQueue(c.channel, b, { baseDir: c.baseDir, log: c.log, maxFrameBytes: c.maxFrameBytes }),
};
