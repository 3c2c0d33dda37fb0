// Where a queue channel's binding opens, by URI scheme (docs/channels.md): the factory shape. The table
// is CHANNEL_SCHEMES in src/runtime/schemes.ts, with the transports' and the swarm buses'.
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
  monotonic: () => number;
  maxFrameBytes?: number;
}

export type ChannelListenerFactory = (b: ChannelBinding, ctx: ChannelListenContext) => Promise<Transport>;
