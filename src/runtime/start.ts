// One running runtime: the agent kernel with its capability modules, the router, and the transports it serves.
// Built by the composition root (./compose.ts), which derives these dependencies from the host.
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
// The capability modules load at STARTING, only for a session that needs them (lazy-descriptors.ts).
import { lazyAgent, lazyChannels, lazyMemory, lazySwarm, lazyTools } from './lazy-descriptors.ts';
import type { Redactor } from '../log/redactor.ts';
import type { LedgerStore } from '../kernel/ledger.ts';
import type { WorkerCommand } from '../tools/builtins/impl.ts';
import { openSessionTelemetry } from './telemetry-open.ts';
import { withMethodTelemetry } from './method-telemetry.ts';
import type { AgentModule } from './agent-module.ts';
import type { SqliteDatabase } from '../memory/sqlite/types.ts';
import { sessionProviders } from './provider-chain.ts';

export interface RuntimeDeps {
  config: RuntimeConfig;
  log: Logger;
  clock: Clock;
  reader: SourceReader;
  cwd: string;
  /** Directory of claw.runtime.yaml: its relative paths (swarm.bus fs:dir) resolve against it, as data_dir's do. */
  configDir?: string;
  /** claw.runtime.yaml itself: hidden from tools like data_dir and the secrets directory (docs/security.md). */
  configFile?: string;
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
  writeStderr: (text: string) => void;
  /**
   * The FemtoClaw agent loop runs in this runtime (`claw chat`; queue channels in the runtime config
   * turn it on too): the agent module is added, and audit is on (FemtoClaw §17).
   */
  agentLoop?: boolean;
  /** Tags stored with each conversation entry the default agent records (channel, user). */
  historyTags?: Record<string, unknown>;
}

export interface Runtime {
  agent: Agent;
  /** The FemtoClaw agent module when the agent loop runs here (`agentLoop`). */
  agentLoop?: AgentModule;
  /**
   * The session's memory database, opened now if the manifest declares one and nothing opened it yet (memory opens
   * on first need, docs/memory.md); undefined without memory or when it failed to open.
   */
  memoryDatabase(): Promise<SqliteDatabase | undefined>;
  /** Resolves when a pending tool approval is decided or expires (undefined: none pending). */
  approvalSettled(requestId: string): Promise<unknown> | undefined;
  stop(reason: string): Promise<void>;
}

export function startRuntime(d: RuntimeDeps): Runtime {
  // Channels listen too (a Telegram approver is asked through the channel, docs/channels.md "Telegram").
  const listeners = new Set<(n: Parameters<Transport['notify']>[0]) => void>();
  const notify = (n: Parameters<Transport['notify']>[0]) => {
    for (const t of d.transports) t.notify(n);
    for (const l of listeners) l(n);
  };
  // Memory (Level 3, docs/memory.md): its database also holds the token ledger and the tool-call dedup
  // outcomes while it is open; without one they stay in files / in memory.
  const dataDir = d.dataDir ?? joinPath(d.cwd, '.claw-data');
  // Stores that use a model (embeddings, summarize compaction) get the session's providers (docs/memory.md
  // "Embeddings and summaries"); called at STARTING only when a store needs one.
  const memory = lazyMemory(async () =>
    (await import('./memory-module.ts')).memoryModule({ config: d.config, log: d.log, clock: d.clock, dataDir, home: d.env.HOME, providers: { chat: (m, t) => providerFor(m, t), deps: (m, t) => providerDepsFor(m, t) } }),
  );
  const agentLoop = d.agentLoop === true || Object.keys(d.config.channels ?? {}).length > 0;
  const ledgerStore = memory.ledgerStore(d.ledgerStore);
  const providers = sessionProviders({ ledgerStore, secrets: d.secrets, clock: d.clock, log: d.log, config: d.config });
  const providerFor = providers.client;
  const providerDepsFor = providers.deps;
  const tools = lazyTools(agentLoop, async () =>
    (await import('./tools-wiring.ts')).wiredToolsModule(d, { notify, ledgerStore, dedupStore: memory.dedupStore, dedupReady: memory.whenOpen, dataDir, agentLoop, providers }),
  );
  const agentModuleOf = agentLoop
    ? lazyAgent(async () =>
        (await import('./agent-module.ts')).agentModule({ config: d.config, clock: d.clock, log: d.log, redactor: d.redactor, secrets: d.secrets, ledgerStore, tools, memory, workspaceDir: joinPath(dataDir, 'workspace'), historyTags: d.historyTags, provider: providerFor }),
      )
    : undefined;
  // Channels (docs/channels.md): bound in claw.runtime.yaml `channels:`, they feed the agent loop above; a
  // manifest declaring a channel this runtime does not serve is refused at STARTING, bound or not.
  const channels = lazyChannels((s) => s.manifest.channels.length > 0 || d.config.channels !== undefined, async () =>
        (await import('./channels-module.ts')).channelsModule({ config: d.config, log: d.log, clock: d.clock, dataDir, getAgent: () => agentModuleOf?.channelAgent(), secrets: d.secrets, maxFrameBytes: d.config.limits?.max_frame_bytes,
          notifications: (l) => (listeners.add(l), () => listeners.delete(l)),
          // A channel admin's decision goes through the same claw.tool.approve / claw.tool.deny methods as an operator's.
          decide: async (request_id, decision, reason): Promise<boolean> =>
            ((await agent.dispatch(decision === 'approved' ? 'claw.tool.approve' : 'claw.tool.deny', { request_id, ...(reason === undefined ? {} : { reason }) }, { transport: 'channel' })) as { acknowledged: boolean }).acknowledged }),
  );
  // Swarm (Level 3, docs/swarm.md): a peer's task runs through this agent's own dispatch (gates included).
  const swarm = lazySwarm(async () =>
    (await import('./swarm-module.ts')).swarmModule({ config: d.config, log: d.log, clock: d.clock, cwd: d.configDir ?? d.cwd, secrets: d.secrets, notify, dispatch: async (method, params) => agent.dispatch(method, params, { transport: 'swarm' }) }),
  );
  const agent = new Agent({
    clock: d.clock,
    log: d.log,
    config: d.config,
    launchManifest: d.launchManifest,
    notify,
    loadWireManifest: (value, defaultClaw) => loadWireManifest(value, defaultClaw, d),
    openTelemetry: (s) => openSessionTelemetry(s.manifest, d),
    modules: [secretsPreflight(d.secrets, d.log), withMethodTelemetry(memory, 'memory_ops', d.clock), tools, withMethodTelemetry(swarm, 'swarm_ops', d.clock), ...(agentModuleOf ? [agentModuleOf] : []), channels, ...(d.modules ?? [])],
  });
  const router = new Router({
    dispatch: agent.dispatch,
    inflight: agent.inflight,
    log: d.log,
    maxDepth: d.config.limits?.max_depth,
    redact: (v) => d.redactor.redactValue(v),
    onResponse: (msg) => d.log.debug('response without a pending request ignored', { id: msg.id }),
    // §5.11 `errors`: every JSON-RPC error response (code and message: both already redacted).
    onError: (method, e) => agent.telemetry.emit('errors', 'error', { method, code: e.code, message: e.message }),
  });
  for (const t of d.transports) t.start((frame) => router.handle(frame, t.name));
  return {
    agent,
    agentLoop: agentModuleOf,
    async memoryDatabase() {
      await memory.whenOpen?.()?.catch(() => {}); // a failed open is the memory module's to report
      return memory.database?.();
    },
    approvalSettled: (id) => tools.approvalSettled?.(id),
    async stop(reason) {
      await agent.shutdown(reason);
      await Promise.all(d.transports.map((t) => t.close()));
    },
  };
}
