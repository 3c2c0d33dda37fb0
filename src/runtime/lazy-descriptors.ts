// The static faces of the capability modules (docs/startup.md): each module's method
// table and the accessors the rest of the runtime uses, with the implementation (tools-module.ts,
// memory-module.ts, swarm-module.ts, agent-module.ts, channels-module.ts) loaded by import() at STARTING
// only for a session that needs it. The `needed` predicates are conservative: whenever the kernel could
// dispatch one of a module's methods in a session (its level, or a level-3 manifest for the level-3
// groups, spec §11), or the module's start would do anything, the implementation is loaded.
import { manifestLevel } from '../kernel/conformance.ts';
import type { Session } from '../kernel/agent.ts';
import type { LedgerStore } from '../kernel/ledger.ts';
import { lazyModule, type LazyModule, type MethodShape } from './lazy-module.ts';
import type { ToolsModule } from './tools-module.ts';
import type { MemoryModule } from './memory-module.ts';
import type { AgentModule } from './agent-module.ts';
import type { KernelModule } from '../kernel/agent.ts';

const READY: MethodShape['states'] = ['READY'];
const READY_STOPPING: MethodShape['states'] = ['READY', 'STOPPING'];

/** Level 3 methods are dispatched for a level-3 session, or a level-3 manifest (§11, docs/protocol.md). */
const reachesLevel3 = (s: Session) => s.level >= 3 || manifestLevel(s.manifest) >= 3;

/**
 * Tools (Level 2): a level-2 session, the agent loop (it calls tools through this module's gate path and
 * reads its audit), or a manifest with tools or policies (the audit log a policy may turn on).
 */
export function lazyTools(agentLoop: boolean, load: () => Promise<ToolsModule>): ToolsModule & LazyModule<ToolsModule> {
  const base = lazyModule({
    name: 'tools',
    methods: { 'claw.tool.call': { level: 2, states: READY }, 'claw.tool.approve': { level: 2, states: READY_STOPPING }, 'claw.tool.deny': { level: 2, states: READY_STOPPING } },
    needed: (s) => agentLoop || s.level >= 2 || s.manifest.tools.length > 0 || s.manifest.policies.length > 0,
    load,
  });
  return Object.assign(base, { agentTools: () => base.impl()?.agentTools(), audit: () => base.impl()?.audit(), approvalSettled: (id: string) => base.impl()?.approvalSettled?.(id) });
}

/** Memory (Level 3): a manifest with a Memory primitive (the agent loop records turns there), or level 3. */
export function lazyMemory(load: () => Promise<MemoryModule>): MemoryModule & LazyModule<MemoryModule> {
  let fallbackLedger: LedgerStore | undefined;
  let implLedger: LedgerStore | undefined;
  const base = lazyModule({
    name: 'memory',
    methods: { 'claw.memory.store': { level: 3, states: READY }, 'claw.memory.query': { level: 3, states: READY }, 'claw.memory.compact': { level: 3, states: READY } },
    needed: (s) => s.manifest.memory !== undefined || reachesLevel3(s),
    // The implementation's start keeps the fallback under its database ledger: hand it over before.
    load: async () => {
      const m = await load();
      if (fallbackLedger) implLedger = m.ledgerStore(fallbackLedger);
      return m;
    },
  });
  /** The implementation's ledger view (its database while open, else the fallback), once loaded. */
  const ledger = (): LedgerStore => {
    const m = base.impl();
    if (!m) return fallbackLedger!;
    return (implLedger ??= m.ledgerStore(fallbackLedger!));
  };
  return Object.assign(base, {
    ledgerStore(fallback: LedgerStore): LedgerStore {
      fallbackLedger = fallback;
      implLedger = undefined;
      return { load: (p) => ledger().load(p), save: (p, e) => ledger().save(p, e) };
    },
    dedupStore: () => base.impl()?.dedupStore(),
    conversationStore: () => base.impl()?.conversationStore(),
    database: () => base.impl()?.database?.(),
    whenOpen: () => base.impl()?.whenOpen?.(),
  });
}

/** Swarm (Level 3): the methods are dispatched for any level-3 manifest (answered "no swarm" without one). */
export function lazySwarm(load: () => Promise<KernelModule>): LazyModule<KernelModule> {
  const level3 = { level: 3, states: READY } as const;
  const level3Stopping = { level: 3, states: READY_STOPPING } as const;
  return lazyModule({
    name: 'swarm',
    methods: {
      'claw.swarm.delegate': level3,
      'claw.swarm.report': level3Stopping,
      'claw.swarm.broadcast': level3,
      'claw.swarm.discover': level3,
      'claw.swarm.result': level3Stopping,
    },
    needed: (s) => s.manifest.swarm !== undefined || reachesLevel3(s),
    load,
  });
}

/** The FemtoClaw agent loop: only constructed when it runs here, so every session needs it. */
export function lazyAgent(load: () => Promise<AgentModule>): AgentModule & LazyModule<AgentModule> {
  const base = lazyModule({ name: 'agent', needed: () => true, load });
  return Object.assign(base, { channelAgent: () => base.impl()?.channelAgent() });
}

/** Queue channels: only constructed when claw.runtime.yaml binds some, so every session needs them. */
export function lazyChannels(needed: (s: Session) => boolean, load: () => Promise<KernelModule>): LazyModule<KernelModule> {
  return lazyModule({ name: 'channels', needed, load });
}
