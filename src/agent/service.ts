// The agent of one session: the system prompt, the provider chain, the capability registry and the gate
// path put together into `turn(text)`. Channels (the implicit CLI channel of `claw chat`, queue channels)
// call turn(); they never reach tools or providers another way.
import type { ResolvedManifest } from '../manifest/resolved.ts';
import type { ProviderClient, TelemetrySink } from '../kernel/ports.ts';
import type { ArgumentCheck } from '../tools/json-schema.ts';
import type { SandboxSpec } from '../manifest/schema/index.ts';
import { turnSetup } from './turn-setup.ts';
import { applicableSkills, callPermissions, skillForTool, skillsForTool, skillSandbox } from './skills.ts';
import { runTurn } from './loop.ts';
import type { OutputSetting } from '../provider/output-mode.ts';
import type { History, LoopLimits, RecordVerdict, ToolOutcome, TurnResult } from './types.ts';

export interface AgentToolInfo {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
  check: ArgumentCheck;
}

/** The tools module's gate path, as the loop uses it (src/runtime/tools-module.ts). */
export interface AgentTools {
  list(): AgentToolInfo[];
  call(
    name: string,
    args: Record<string, unknown>,
    o: { requestId: string; skill?: string; narrow?: SandboxSpec; requireApproval?: boolean; signal: AbortSignal },
  ): Promise<ToolOutcome>;
}

export interface AgentServiceDeps {
  manifest: ResolvedManifest;
  tools: AgentTools;
  provider: ProviderClient;
  telemetry: TelemetrySink;
  recordVerdict: RecordVerdict;
  history: History;
  redact(s: string): string;
  now(): number;
  newId(): string;
  /** Identity context_files, already read (name → text). */
  contextFiles: [string, string][];
  /** Send tool definitions to providers with native tool calling (runtime config `agent.native_tools`). */
  nativeTools: boolean;
  /** Provider name → output mode (claw.runtime.yaml `providers.<name>.output`). */
  outputModes?: Readonly<Record<string, OutputSetting>>;
  /** Where a skill's `write-workspace` permission may write. */
  workspaceDir: string;
  limits?: Partial<LoopLimits>;
}

export interface AgentService {
  readonly systemPrompt: string;
  turn(text: string, signal: AbortSignal): Promise<TurnResult>;
}

export function createAgentService(d: AgentServiceDeps): AgentService {
  const m = d.manifest;
  const tools = d.tools.list();
  const id = m.identity.spec as { personality?: string; locale?: string };
  const setup = turnSetup({
    agentName: m.identity.name,
    personality: id.personality,
    locale: id.locale,
    contextFiles: d.contextFiles,
    skills: applicableSkills(m, new Set(tools.map((t) => t.name))),
    tools,
    nativeTools: d.nativeTools,
    outputModes: d.outputModes,
    redact: d.redact,
  });
  const complete = setup.completeWith(d.provider);
  // §5.5: a call made for a skill carries the skill (policy scope `skill`); the permissions of every skill
  // requiring the tool narrow the sandbox; approval_required forces the approval gate. Fixed per tool.
  const attribution = new Map<string, { skill?: string; narrow?: SandboxSpec; requireApproval: boolean }>();
  const attributionOf = (tool: string) => {
    let a = attribution.get(tool);
    if (!a) {
      const perms = callPermissions(skillsForTool(m, tool));
      attribution.set(tool, (a = { skill: skillForTool(m, tool)?.name, narrow: skillSandbox(perms, d.workspaceDir), requireApproval: perms?.approval_required === true }));
    }
    return a;
  };

  return {
    systemPrompt: setup.systemPrompt,
    turn(text, signal) {
      return runTurn(
        text,
        {
          systemPrompt: setup.systemPrompt,
          complete,
          validate: setup.validate,
          correction: setup.correction,
          callTool(tool, args, requestId, sig) {
            return d.tools.call(tool, args, { ...attributionOf(tool), requestId, signal: sig });
          },
          history: d.history,
          recordVerdict: d.recordVerdict,
          telemetry: d.telemetry,
          redact: d.redact,
          newId: d.newId,
          now: d.now,
          limits: d.limits,
        },
        signal,
      );
    },
  };
}
