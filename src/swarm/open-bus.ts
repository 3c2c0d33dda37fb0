// claw.runtime.yaml `swarm.bus` → a PeerBus (docs/swarm.md), through a scheme → factory table like the
// transports' (the runtime's is BUS_SCHEMES in src/runtime/schemes.ts). The memory and fs factories are here.
import type { Clock, Logger } from '../kernel/ports.ts';
import type { SecretResolver } from '../kernel/secrets.ts';
import { ClawError } from '../protocol/errors.ts';
import type { PeerBus } from './bus.ts';
import type { SwarmRuntimeConfig } from './config.ts';
import { SWARM_DEFAULTS } from './config.ts';
import { MemoryHub } from './memory-bus.ts';

export interface OpenBusContext {
  self: string;
  swarm: string;
  log: Logger;
  clock: Clock;
  /** A relative fs: path (and an MQTT ca_file) resolves against this. */
  cwd: string;
  presenceMs: number;
  secrets?: SecretResolver;
}

export type BusFactory = (uri: string, cfg: SwarmRuntimeConfig, c: OpenBusContext & { staleAfterMs: number }) => Promise<PeerBus>;

export type BusTable = Readonly<Record<string, BusFactory>>;

/** The agents of this process (every runtime in it shares the hub). */
let processHub: MemoryHub | undefined;

/** `backend: in-process` or `bus: memory`: the peers are the agents of this process only. */
export const memoryBus: BusFactory = async (_uri, _cfg, c) => (processHub ??= new MemoryHub(() => c.clock.now())).connect(c.self);

/** `bus: fs:<dir>`: peers exchange files in a shared directory (./fs-bus.ts). */
export const fsBus: BusFactory = async (uri, cfg, c) => {
  const { parseFsUri } = await import('../transports/fs/options.ts');
  const parsed = parseFsUri(uri, c.cwd);
  if ('error' in parsed) throw new ClawError('usage', `swarm.bus: ${parsed.error}`);
  const { openFsBus } = await import('./fs-bus.ts');
  return openFsBus({ root: parsed.dir, self: c.self, log: c.log, clock: c.clock, staleAfterMs: c.staleAfterMs, pollMs: cfg.poll_interval_ms ?? SWARM_DEFAULTS.poll_interval_ms });
};

export async function openBus(cfg: SwarmRuntimeConfig | undefined, c: OpenBusContext, table: BusTable): Promise<PeerBus> {
  const uri = cfg?.bus ?? 'memory';
  const scheme = uri === 'memory' ? 'memory' : /^([a-z][a-z0-9+.-]*):/i.exec(uri)?.[1]?.toLowerCase();
  const factory = scheme && Object.hasOwn(table, scheme) ? table[scheme] : undefined;
  if (!factory) {
    throw new ClawError('usage', `swarm.bus "${scheme ?? uri}:" is not available in this build (available: ${Object.keys(table).join(', ')})`);
  }
  return factory(uri, cfg ?? { bus: 'memory' }, { ...c, staleAfterMs: cfg?.stale_after_ms ?? 3 * c.presenceMs });
}
