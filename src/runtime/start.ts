// Composition of one running runtime: agent kernel + router + transports. Shared by every target.
import { Agent, type KernelModule } from '../kernel/agent.ts';
import { Router } from '../kernel/router.ts';
import type { Clock, Logger, Transport } from '../kernel/ports.ts';
import type { RuntimeConfig } from '../config/runtime-config.ts';
import type { ResolvedManifest } from '../manifest/resolved.ts';
import type { SourceReader } from '../manifest/reader.ts';
import type { SecretResolver } from '../kernel/secrets.ts';
import { loadWireManifest } from './wire-manifest.ts';
import { joinPath } from '../manifest/reader.ts';
import { secretsPreflight } from './secrets-preflight.ts';
import { toolsModule } from './tools-module.ts';
import { memoryModule } from './memory-module.ts';
import { swarmModule } from './swarm-module.ts';
import { createToolEnvironment } from './tool-deps.ts';
import type { Redactor } from '../log/redactor.ts';
import type { LedgerStore } from '../kernel/ledger.ts';
import type { WorkerCommand } from '../tools/builtins/impl.ts';
import { openSessionTelemetry } from './telemetry-open.ts';

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
  redactor: Redactor;
  ledgerStore: LedgerStore;
  /** Where the runtime keeps state (claw.runtime.yaml data_dir): the memory database lives here. */
  dataDir?: string;
  /** The runtime's own environment (tools get an allowlisted part of it). */
  env: Record<string, string | undefined>;
  version: string;
  worker?: WorkerCommand;
  /** Where the `console` telemetry exporter writes (stderr: stdout carries protocol only). */
  writeStderr?: (text: string) => void;
}

export interface Runtime {
  agent: Agent;
  stop(reason: string): Promise<void>;
}

export function startRuntime(d: RuntimeDeps): Runtime {
  const notify = (n: Parameters<Transport['notify']>[0]) => {
    for (const t of d.transports) t.notify(n);
  };
  // Memory (Level 3, docs/memory.md): its database also holds the token ledger and the tool-call dedup
  // outcomes while it is open; without one they stay in files / in memory.
  const memory = memoryModule({ config: d.config, log: d.log, dataDir: d.dataDir ?? joinPath(d.cwd, '.claw-data'), home: d.env.HOME });
  const tools = toolsModule({
    config: d.config,
    clock: d.clock,
    log: d.log,
    redactor: d.redactor,
    notify,
    ledgerStore: memory.ledgerStore(d.ledgerStore),
    dedupStore: memory.dedupStore,
    environment: (m) => createToolEnvironment({ config: d.config, log: d.log, secrets: d.secrets, env: d.env, cwd: d.cwd, version: d.version, worker: d.worker }, m),
  });
  // Swarm (Level 3, docs/swarm.md): a peer's task runs through this agent's own dispatch (gates included).
  const swarm = swarmModule({ config: d.config, log: d.log, clock: d.clock, cwd: d.cwd, secrets: d.secrets, notify, dispatch: async (method, params) => agent.dispatch(method, params, { transport: 'swarm' }) });
  const agent = new Agent({
    clock: d.clock,
    log: d.log,
    config: d.config,
    launchManifest: d.launchManifest,
    notify,
    loadWireManifest: (value, defaultClaw) => loadWireManifest(value, defaultClaw, d),
    openTelemetry: (s) => openSessionTelemetry(s.manifest, d),
    modules: [secretsPreflight(d.secrets, d.log), memory, tools, swarm, ...(d.modules ?? [])],
  });
  const router = new Router({
    dispatch: agent.dispatch,
    inflight: agent.inflight,
    log: d.log,
    maxDepth: d.config.limits?.max_depth,
    redact: (v) => d.redactor.redactValue(v),
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
