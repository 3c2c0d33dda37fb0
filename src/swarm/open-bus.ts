// claw.runtime.yaml `swarm.bus` → a PeerBus (docs/swarm.md). Adapters load lazily: an agent
// without a swarm never loads fs or MQTT code.
import type { Clock, Logger } from '../kernel/ports.ts';
import { ClawError } from '../protocol/errors.ts';
import type { PeerBus } from './bus.ts';
import type { SwarmRuntimeConfig } from './config.ts';
import { SWARM_DEFAULTS } from './config.ts';
import { MemoryHub } from './memory-bus.ts';

export interface OpenBusContext {
  self: string;
  log: Logger;
  clock: Clock;
  /** A relative fs: path resolves against this. */
  cwd: string;
  presenceMs: number;
}

let processHub: MemoryHub | undefined;

export async function openBus(cfg: SwarmRuntimeConfig | undefined, c: OpenBusContext): Promise<PeerBus> {
  const uri = cfg?.bus ?? 'memory';
  const stale = cfg?.stale_after_ms ?? 3 * c.presenceMs;
  if (uri === 'memory') {
    // `backend: in-process` or no bus configured: peers are the agents of this process only.
    processHub ??= new MemoryHub(() => c.clock.now());
    return processHub.connect(c.self);
  }
  if (uri.startsWith('fs:')) {
    const { parseFsUri } = await import('../transports/fs/options.ts');
    const parsed = parseFsUri(uri, c.cwd);
    if ('error' in parsed) throw new ClawError('usage', `swarm.bus: ${parsed.error}`);
    const { openFsBus } = await import('./fs-bus.ts');
    return openFsBus({ root: parsed.dir, self: c.self, log: c.log, clock: c.clock, staleAfterMs: stale, pollMs: cfg?.poll_interval_ms ?? SWARM_DEFAULTS.poll_interval_ms });
  }
  const { openMqttBus } = await import('./mqtt-bus.ts');
  return openMqttBus(uri, { self: c.self, log: c.log, clock: c.clock, staleAfterMs: stale });
}
