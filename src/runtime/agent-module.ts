// The FemtoClaw agent of a session (docs/agent.md) as a kernel module: at STARTING, after tools and memory,
// it assembles the agent service (system prompt, provider chain, capability registry, gate path,
// conversation history, audit); channels reach it through `agent()`. It adds no JSON-RPC methods —
// CKP has none for "talk to the agent"; channels do (the CLI channel of `claw chat`, queue channels).
import { nodeCrypto } from '../node/lazy.ts';
import { mkdir } from 'node:fs/promises';
import { readBoundedText } from '../node/fs-reader.ts';
import type { KernelModule, AgentCore } from '../kernel/agent.ts';
import type { Clock, Logger, ProviderClient, TelemetrySink } from '../kernel/ports.ts';
import type { FailureRecord, OutputSetting } from '../provider/index.ts';
import type { LedgerStore } from '../kernel/ledger.ts';
import { TokenLedger } from '../kernel/ledger.ts';
import type { SecretResolver } from '../kernel/secrets.ts';
import type { Redactor } from '../log/redactor.ts';
import type { RuntimeConfig } from '../config/runtime-config.ts';
import type { ResolvedManifest } from '../manifest/resolved.ts';
import { dirnameOf, isInside, joinPath } from '../manifest/reader.ts';
import { ClawError } from '../protocol/errors.ts';
import { createProviderClient } from '../provider/index.ts';
import { providerTimeoutsOf } from './provider-chain.ts';
import { createAgentService } from '../agent/service.ts';
import { NO_AGENT_TOOLS, perConversationAgent, type ConversationKey, type TurnAgent } from '../channels/agent-adapter.ts';
import type { ChannelAgent } from '../channels/types.ts';
import { MemoryHistory, historyScope } from '../agent/history.ts';
import type { ToolsModule } from './tools-module.ts';
import type { MemoryModule } from './memory-module.ts';

/** A context file is cut to this many characters before it goes into the system prompt. */
export const MAX_CONTEXT_FILE_CHARS = 16_384;

export interface AgentModuleDeps {
  config: RuntimeConfig;
  clock: Clock;
  log: Logger;
  redactor: Redactor;
  secrets: SecretResolver;
  ledgerStore: LedgerStore;
  tools: ToolsModule;
  memory: MemoryModule;
  /** Where `write-workspace` skills may write (default: data_dir/workspace). */
  workspaceDir: string;
  /** Tags stored with each conversation entry of the default agent (e.g. the channel and user). */
  historyTags?: Record<string, unknown>;
  /**
   * The session's provider chain, when the runtime shares one with composite tools (docs/agent.md
   * "Composite tools"), so requests_per_minute windows count both; else the module builds its own.
   */
  provider?(m: ResolvedManifest, telemetry: TelemetrySink): ProviderClient & { prepare(): Promise<FailureRecord[]> };
}

export interface AgentModule extends KernelModule {
  /** One agent per channel conversation, tools off for viewers (docs/channels.md). */
  channelAgent(): ChannelAgent | undefined;
}

export function agentModule(d: AgentModuleDeps): AgentModule {
  let channels: ChannelAgent | undefined;
  return {
    name: 'agent',
    channelAgent: () => channels,
    async start(s, core: AgentCore) {
      const m = s.manifest;
      const tools = d.tools.agentTools();
      const audit = d.tools.audit();
      if (!tools) throw new Error('the agent module starts after the tools module');
      const provider = d.provider?.(m, core.telemetry) ?? createProviderClient({
        manifest: m,
        ledger: new TokenLedger(d.ledgerStore, d.clock),
        secrets: d.secrets,
        clock: d.clock,
        log: d.log,
        telemetry: core.telemetry,
        timeouts: providerTimeoutsOf(d.config),
      });
      // Rules files and secrets of the whole chain are checked now: a broken chain is said at start, by name.
      for (const f of await provider.prepare()) d.log.warn('provider not usable', { provider: f.provider, reason: f.reason, error: f.message });
      // The directory a skill's `write-workspace` permission grants; tools start in it when the sandbox scopes to it.
      await mkdir(d.workspaceDir, { recursive: true, mode: 0o700 });
      const store = d.memory.conversationStore();
      const contextFiles = await readContextFiles(m, d.log);
      // One agent per conversation: its own history (resumed from the store on its first turn), and no tools
      // for a channel user who may not use them.
      const make = (k: ConversationKey): TurnAgent => {
        // The turn's own channel and user win over the session-wide tags: a queue user's turns are theirs.
        const tags: Record<string, unknown> = { ...d.historyTags, ...(k.channel ? { channel: k.channel } : {}), ...(k.user ? { user: k.user } : {}), conversation: k.conversation };
        const history = new MemoryHistory(store, tags, historyScope(m, typeof tags.channel === 'string' ? tags.channel : 'cli'));
        const svc = createAgentService({
          manifest: m,
          tools: k.tools ? tools : NO_AGENT_TOOLS,
          provider,
          telemetry: core.telemetry,
          recordVerdict: (raw, verdict, ctx) => audit?.recordVerdict(raw, verdict, ctx),
          history,
          redact: (x) => d.redactor.redact(x),
          now: () => d.clock.monotonic(),
          newId: () => nodeCrypto().randomUUID(),
          contextFiles,
          nativeTools: d.config.agent?.native_tools !== false,
          outputModes: outputModesOf(d.config),
          workspaceDir: d.workspaceDir,
          limits: { maxCorrections: d.config.agent?.max_corrections, maxToolSteps: d.config.agent?.max_tool_steps },
        });
        let resumed: Promise<unknown> | undefined;
        return {
          async turn(text, signal) {
            await (resumed ??= history.resume());
            return svc.turn(text, signal);
          },
        };
      };
      channels = perConversationAgent(make);
      d.log.info('agent ready', { agent: m.identity.name, tools: tools.list().length, skills: m.skills.length, conversation_store: store?.name, audit: audit !== undefined });
    },
    async stop() {
      channels = undefined;
    },
  };
}

/** claw.runtime.yaml `providers.<name>.output` (docs/agent.md "Output modes"). */
function outputModesOf(c: RuntimeConfig): Record<string, OutputSetting> | undefined {
  if (!c.providers) return undefined;
  const out: Record<string, OutputSetting> = {};
  for (const [name, p] of Object.entries(c.providers)) if (p.output) out[name] = p.output;
  return out;
}

/**
 * Identity context_files (§5.1): name → path relative to the Identity's file; unreadable files are said, not fatal.
 * Read like every manifest file (regular files only, bounded); a wire manifest's stay inside its fileRoot.
 */
export async function readContextFiles(m: ResolvedManifest, log: Logger): Promise<[string, string][]> {
  const files = (m.identity.spec.context_files ?? {}) as Record<string, string>;
  const file = m.identity.origin.file;
  const base = m.fileRoot !== undefined && !file.startsWith('/') ? m.fileRoot : dirnameOf(file);
  const out: [string, string][] = [];
  for (const [name, rel] of Object.entries(files)) {
    try {
      const path = joinPath(base, rel);
      if (m.fileRoot !== undefined && !isInside(path, m.fileRoot)) throw new ClawError('outside', `${rel} is outside ${m.fileRoot}`);
      // Enough bytes for MAX_CONTEXT_FILE_CHARS characters of any UTF-8 text (at most 4 bytes each).
      const text = readBoundedText(path, { maxBytes: 4 * MAX_CONTEXT_FILE_CHARS, truncate: true, ...(m.fileRoot === undefined ? {} : { within: m.fileRoot }) });
      out.push([name, text.length > MAX_CONTEXT_FILE_CHARS ? text.slice(0, MAX_CONTEXT_FILE_CHARS) : text]);
    } catch (e) {
      log.warn('context file not readable', { name, path: rel, error: (e as NodeJS.ErrnoException).code ?? String(e) });
    }
  }
  return out;
}
