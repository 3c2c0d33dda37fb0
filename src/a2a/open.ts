// Builds the A2A module for `claw run` when claw.runtime.yaml says `a2a: { enabled: true }` (docs/a2a.md):
// the HTTP listeners among the opened transports, and where tasks are kept: the memory database while the session
// has one (docs/a2a.md "Tasks"), else the task file in data_dir/a2a.
import type { Clock, Logger, Transport } from '../kernel/ports.ts';
import type { RuntimeConfig } from '../config/runtime-config.ts';
import type { KernelModule } from '../kernel/agent.ts';
import type { ChannelAgent } from '../channels/types.ts';
import type { HttpTransport } from '../transports/http/transport.ts';
import type { TaskDatabase } from './task-store-sqlite.ts';
import { nodeCrypto } from '../node/lazy.ts';
import { a2aModule, type A2aModuleDeps } from './module.ts';
import { fileTaskStore } from './task-store.ts';
import { createChannelGate } from '../channels/access.ts';
import { filePairingStorage, pairingDir } from '../channels/pairing-store.ts';

export async function openA2a(o: {
  config: RuntimeConfig;
  log: Logger;
  listeners: readonly Transport[];
  dataDir: string;
  version: string;
  clock: Clock;
  getAgent: () => ChannelAgent | undefined;
  /** The session's memory database (opened on this first need), if the manifest declares memory. */
  getDatabase?: () => Promise<TaskDatabase | undefined>;
  /** Tool approvals a task waits for (input_required): answering one, and learning that it was decided. */
  approvals?: A2aModuleDeps['approvals'];
}): Promise<KernelModule & { notifications: Transport }> {
  const http = o.listeners.filter((t): t is HttpTransport => t.name === 'http' && 'addRoute' in t);
  return a2aModule({
    config: o.config,
    log: o.log,
    listeners: http,
    getAgent: o.getAgent,
    openStore: async () => {
      const db = await o.getDatabase?.();
      const dir = `${o.dataDir}/a2a`;
      return db ? (await import('./task-store-sqlite.ts')).sqliteTaskStore(db, `${dir}/tasks.json`) : fileTaskStore(dir);
    },
    newId: () => nodeCrypto().randomUUID(),
    now: () => o.clock.now(),
    monotonic: () => o.clock.monotonic(),
    runtimeVersion: o.version,
    // The same gate as every channel's (docs/channels.md "The gate"); pairings in data_dir, approved by `claw pair`.
    openGate: (channel, spec) => createChannelGate(channel, spec, {
      now: () => o.clock.now(),
      monotonic: () => o.clock.monotonic(),
      randomInt: (max) => nodeCrypto().randomInt(max),
      pairing: spec.access_control?.mode === 'pairing' ? filePairingStorage(pairingDir(o.dataDir, channel)) : undefined,
    }),
    approvals: o.approvals,
  });
}
