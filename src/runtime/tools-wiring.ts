// The tools module with what it needs from the rest of the runtime (Level 2, docs/tools.md): the session's audit
// log, composite tools on the session's provider chain, and the tool environment (runner, MCP, builtins). Loaded
// at STARTING only for a session with tools (lazy-descriptors.ts), so none of this is on the start-up path.
import { toolsModule, type ToolsModule } from './tools-module.ts';
import { openAuditSession } from '../audit/session.ts';
import type { OpenOutage } from '../audit/log.ts';
import { compositeBinder } from '../agent/composite.ts';
import { createToolEnvironment } from './tool-deps.ts';
import { joinPath } from '../manifest/reader.ts';
import { nodeCrypto } from '../node/lazy.ts';
import type { JsonRpcNotification } from '../protocol/jsonrpc.ts';
import type { LedgerStore } from '../kernel/ledger.ts';
import type { DedupStore } from '../kernel/idempotency.ts';
import type { RuntimeDeps } from './start.ts';
import type { SessionProviders } from './provider-chain.ts';

export interface ToolsWiring {
  notify(n: JsonRpcNotification): void;
  ledgerStore: LedgerStore;
  dedupStore?: () => DedupStore | undefined;
  dedupReady?: () => Promise<void> | undefined;
  dataDir: string;
  /** The agent loop runs here: audit is on (FemtoClaw §17). */
  agentLoop: boolean;
  providers: SessionProviders;
}

export function wiredToolsModule(d: RuntimeDeps, w: ToolsWiring): ToolsModule {
  // Sessions refused because the audit log could not be opened (a full disk) are accounted in the next one's log.
  const openOutage: OpenOutage = {};
  return toolsModule({
    config: d.config,
    clock: d.clock,
    log: d.log,
    redactor: d.redactor,
    notify: w.notify,
    ledgerStore: w.ledgerStore,
    dedupStore: w.dedupStore,
    dedupReady: w.dedupReady,
    openAudit: (m) => {
      const a = openAuditSession({
        policies: m.policies.map((p) => ({ name: p.name, spec: p.spec })),
        // A composite tool runs a FemtoClaw sub-turn (docs/agent.md "Composite tools"): audit on as for the loop.
        forAgent: w.agentLoop || m.tools.some((t) => t.spec.composite === true),
        path: joinPath(w.dataDir, 'audit/audit.jsonl'),
        now: d.clock.now,
        monotonic: d.clock.monotonic,
        redact: (x) => d.redactor.redact(x),
        // Segments, and where the sqlite / webhook / syslog copies go (docs/audit.md "Destinations").
        runtime: d.config.audit,
        sinkDeps: { secret: (ref) => d.secrets.resolve(ref), sqliteAdapter: d.config.memory?.adapter },
        warn: (msg, fields) => d.log.warn(msg, fields),
        openOutage,
      });
      for (const note of a?.settings.notes ?? []) d.log.info('audit', { note });
      return a;
    },
    // Composite tools work with or without the agent module (`claw run` too): their provider chain is the session's.
    composites: (m) =>
      compositeBinder(m, {
        config: d.config,
        workspaceDir: joinPath(w.dataDir, 'workspace'),
        redact: (x) => d.redactor.redact(x),
        now: () => d.clock.monotonic(),
        newId: () => nodeCrypto().randomUUID(),
        log: d.log,
        provider: (telemetry) => w.providers.client(m, telemetry),
      }),
    environment: (m) =>
      createToolEnvironment({ config: d.config, log: d.log, secrets: d.secrets, env: d.env, cwd: d.cwd, version: d.version, worker: d.worker, dataDir: w.dataDir, configFile: d.configFile }, m),
  });
}
