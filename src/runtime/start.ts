// Composition of one running runtime: agent kernel + router + transports. Shared by every target.
import { Agent, type KernelModule } from '../kernel/agent.ts';
import { Router } from '../kernel/router.ts';
import type { Clock, Logger, Transport } from '../kernel/ports.ts';
import type { RuntimeConfig } from '../config/runtime-config.ts';
import type { ResolvedManifest } from '../manifest/resolved.ts';
import type { SourceReader } from '../manifest/reader.ts';
import type { SecretResolver } from '../kernel/secrets.ts';
import { loadWireManifest } from './wire-manifest.ts';
import { secretsPreflight } from './secrets-preflight.ts';

export interface RuntimeDeps {
  config: RuntimeConfig;
  log: Logger;
  clock: Clock;
  reader: SourceReader;
  cwd: string;
  secrets: SecretResolver;
  launchManifest?: ResolvedManifest;
  transports: Transport[];
  modules?: KernelModule[];
}

export interface Runtime {
  agent: Agent;
  stop(reason: string): Promise<void>;
}

export function startRuntime(d: RuntimeDeps): Runtime {
  const agent = new Agent({
    clock: d.clock,
    log: d.log,
    config: d.config,
    launchManifest: d.launchManifest,
    notify: (n) => {
      for (const t of d.transports) t.notify(n);
    },
    loadWireManifest: (value, defaultClaw) => loadWireManifest(value, defaultClaw, d),
    modules: [secretsPreflight(d.secrets, d.log), ...(d.modules ?? [])],
  });
  const router = new Router({
    dispatch: agent.dispatch,
    inflight: agent.inflight,
    log: d.log,
    maxDepth: d.config.limits?.max_depth,
    onResponse: (msg) => d.log.debug('response without a pending request ignored', { id: msg.id }),
  });
  for (const t of d.transports) t.start((frame) => router.handle(frame, t.name));
  return {
    agent,
    async stop(reason) {
      await agent.shutdown(reason);
      await Promise.all(d.transports.map((t) => t.close()));
    },
  };
}
