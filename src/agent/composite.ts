// Composite tools (spec §5.4 `composite` / `skill_ref`, §5.5 Skill; docs/agent.md): a Tool with
// `composite: true` wraps a Skill and runs the skill's workflow as one tool call. The workflow is a
// bounded sub-turn of the agent loop (runTurn): the skill's instruction and ONLY its tools_required
// tools in the system prompt, the arguments as the task, the session's provider chain, and every
// sub-tool call through the one gate path (AgentTools.call) attributed to the skill — tool.schema.json:
// "The runtime MUST apply gates (policy, sandbox, quota) to each sub-tool invocation within the
// composite." The sub-turn's final FemtoClaw message is the composite's text result. docs/agent.md
// "Composite tools".
import type { ResolvedManifest, ResolvedPrimitive } from '../manifest/resolved.ts';
import type { SandboxSpec } from '../manifest/schema/index.ts';
import type { RuntimeConfig } from '../config/runtime-config.ts';
import type { Logger, ProviderClient, TelemetrySink } from '../kernel/ports.ts';
import { resolveRef } from '../manifest/refs.ts';
import { compileArgumentSchema, schemaProblem, type ArgumentCheck } from '../tools/json-schema.ts';
import { textResult, type ToolImpl, type ToolResult, type ToolRunContext } from '../tools/types.ts';
import type { CompositeTools } from '../tools/registry.ts';
import { narrowSandbox } from '../gates/narrow-sandbox.ts';
import { turnSetup, type TurnSetup } from './turn-setup.ts';
import { skillSandbox, type SkillPermissions } from './skills.ts';
import { MemoryHistory } from './history.ts';
import { runTurn } from './loop.ts';
import type { AgentTools } from './service.ts';
import type { RecordVerdict, TurnResult } from './types.ts';
import { mkdir } from 'node:fs/promises';

/**
 * How deep composites may nest: a composite called by an operator or the agent is level 1; a composite
 * its sub-turn calls is level 2, and so on. Past this a composite is not run (isError result). The
 * loader already refuses composite cycles (manifest check `tool-composite-cycle`); this bounds chains
 * of distinct composites and anything that reaches the runtime without the loader's check.
 */
export const MAX_COMPOSITE_DEPTH = 3;

export interface CompositeDeps {
  /** `agent.max_corrections`, `agent.max_tool_steps`, `agent.native_tools` bound the sub-turn as they bound a turn. */
  config: RuntimeConfig;
  /** Where a skill's `write-workspace` permission may write (the agent module's workspace). */
  workspaceDir: string;
  redact(s: string): string;
  now(): number;
  newId(): string;
  log?: Logger;
  /** The provider chain of the session's manifest (createProviderClient), built once when the session starts. */
  provider(telemetry: TelemetrySink): ProviderClient;
  maxDepth?: number;
}

/** What the tools module hands over once its gate path exists (end of STARTING). */
export interface CompositeSession {
  tools: AgentTools;
  telemetry: TelemetrySink;
  /** The session's audit log: each sub-turn output is recorded as the agent loop's are (FemtoClaw §16–17). */
  recordVerdict?: RecordVerdict;
}

/** Used by src/tools/registry.ts to bind `composite: true` tools, and by the tools module to attach the gate path. */
export interface CompositeBinder extends CompositeTools {
  attach(s: CompositeSession): void;
  detach(): void;
}

interface Attached extends CompositeSession {
  provider: ProviderClient;
  /** Each composite tool's turn setup, built on its first call in the session. */
  setups: Map<string, TurnSetup>;
}

export function compositeBinder(m: ResolvedManifest, d: CompositeDeps): CompositeBinder {
  const maxDepth = d.maxDepth ?? MAX_COMPOSITE_DEPTH;
  let session: Attached | undefined;
  // Sub-call request ids → the nesting level a composite reached through them would run at. The gate path
  // hands a tool only its request id, so this is how a composite learns it was called from a composite.
  const depthOf = new Map<string, number>();

  const skillOf = (tool: ResolvedPrimitive): ResolvedPrimitive => {
    const ref = tool.spec.skill_ref;
    if (typeof ref !== 'string') throw new Error(`tool ${tool.name}: composite: true requires skill_ref naming the Skill it wraps`);
    const r = resolveRef(m, 'Skill', ref);
    if (!r.ok) throw new Error(`tool ${tool.name}: skill_ref "${ref}": ${r.reason}`);
    return r.primitive;
  };

  return {
    check(tool, own) {
      const skill = skillOf(tool);
      const schema = skill.spec.input_schema as Record<string, unknown> | undefined;
      if (schema === undefined) return own;
      const problem = schemaProblem(schema);
      if (problem) throw new Error(`skill ${skill.name}: input_schema is not a usable JSON Schema (${problem})`);
      const skillCheck = compileArgumentSchema(schema);
      skillCheck({}); // an unresolvable $ref throws here, at binding
      // Both schemas hold (§5.4 the tool's, §5.5 the skill's); the skill's issues name the skill.
      return (args) => {
        const issues = own(args);
        return issues.length > 0 ? issues : skillCheck(args).map((i) => ({ ...i, message: `skill ${skill.name}: ${i.message}` }));
      };
    },

    impl(tool) {
      const skill = skillOf(tool);
      return {
        kind: 'builtin',
        // Runs nothing itself: each sub-tool is isolated by its own sandbox through the gates.
        touchesOs: false,
        run: (args, ctx) => runComposite(tool, skill, args, ctx),
      };
    },

    attach(s) {
      session = { ...s, provider: d.provider(s.telemetry), setups: new Map() };
    },
    detach() {
      session = undefined;
      depthOf.clear();
    },
  };

  async function runComposite(tool: ResolvedPrimitive, skill: ResolvedPrimitive, args: Record<string, unknown>, ctx: ToolRunContext): Promise<ToolResult> {
    const s = session;
    if (!s) throw new Error('composite tools run only while the session is READY');
    const depth = depthOf.get(ctx.requestId) ?? 1;
    if (depth > maxDepth) {
      return textResult(`composite tool ${tool.name} was not run: composite tools nest at most ${maxDepth} deep (skill ${skill.name})`, true);
    }
    const required = (skill.spec.tools_required as string[] | undefined) ?? [];
    const all = s.tools.list();
    const tools = all.filter((t) => required.includes(t.name));
    const missing = required.filter((n) => !tools.some((t) => t.name === n));
    if (missing.length > 0) return textResult(`composite tool ${tool.name}: skill ${skill.name} needs tools that are not bound: ${missing.join(', ')}`, true);

    // Per tool and session: the prompt, validator and definitions depend only on the skill and the bound tools.
    let setup = s.setups.get(tool.name);
    if (!setup) {
      setup = turnSetup({
        agentName: m.identity.name,
        locale: (m.identity.spec as { locale?: string }).locale,
        skills: [{ name: skill.name, description: String(skill.spec.description ?? ''), instruction: String(skill.spec.instruction ?? '') }],
        tools,
        nativeTools: d.config.agent?.native_tools !== false,
        outputModes: Object.fromEntries(Object.entries(d.config.providers ?? {}).flatMap(([n, p]) => (p.output ? [[n, p.output]] : []))),
        redact: d.redact,
      });
      s.setups.set(tool.name, setup);
    }
    // §5.5 permissions: the wrapped skill's, known exactly here (no candidate guessing as in the main loop),
    // intersected with the composite's own effective sandbox (its sandbox_ref, narrowed by whatever narrowed
    // this call) — capabilities only: level `none`, so each sub-tool keeps its own isolation level.
    const perms = skill.spec.permissions as SkillPermissions | undefined;
    const outer: SandboxSpec = { ...ctx.sandbox, level: 'none' };
    delete outer.runtime;
    const own = skillSandbox(perms, d.workspaceDir);
    const narrow = own ? narrowSandbox(outer, own) : outer;

    if (perms?.filesystem === 'write-workspace') await mkdir(d.workspaceDir, { recursive: true, mode: 0o700 });

    // "A single atomic tool": a sub-call the gates refuse (policy, approval, sandbox, quota, timeout...) ends
    // the composite at once with an error result naming it; the model is not asked to work around it.
    let refused: { tool: string; code: number; message: string } | undefined;
    const stop = new AbortController();
    const onOuter = () => stop.abort(ctx.signal.reason);
    if (ctx.signal.aborted) onOuter();
    else ctx.signal.addEventListener('abort', onOuter, { once: true });
    const task = `Run the skill "${skill.name}" for the tool "${tool.name}" with these arguments: ${JSON.stringify(args)}\nWhen done, answer with the message form; its content is the tool's result.`;
    let turn: TurnResult | undefined;
    try {
      turn = await runTurn(
        task,
        {
          systemPrompt: setup.systemPrompt,
          complete: setup.completeWith(s.provider),
          validate: setup.validate,
          correction: setup.correction,
          async callTool(name, a, requestId, sig) {
            depthOf.set(requestId, depth + 1);
            try {
              const o = await s.tools.call(name, a, { requestId, skill: skill.name, narrow, requireApproval: perms?.approval_required === true, signal: sig });
              if (!o.ok) {
                refused = { tool: name, code: o.code, message: o.message };
                stop.abort(new Error('sub-call refused'));
              }
              return o;
            } finally {
              depthOf.delete(requestId);
            }
          },
          history: new MemoryHistory(), // the sub-turn's own, never stored: only its result leaves it
          recordVerdict: (raw, verdict, c) => s.recordVerdict?.(raw, verdict, c),
          telemetry: s.telemetry,
          redact: d.redact,
          newId: d.newId,
          now: d.now,
          limits: { maxCorrections: d.config.agent?.max_corrections, maxToolSteps: d.config.agent?.max_tool_steps },
        },
        stop.signal,
      );
    } catch (e) {
      if (!refused || ctx.signal.aborted) throw e;
    } finally {
      ctx.signal.removeEventListener('abort', onOuter);
    }
    if (refused) {
      d.log?.info('composite tool refused', { tool: tool.name, skill: skill.name, request_id: ctx.requestId, sub_tool: refused.tool, code: refused.code });
      return textResult(`composite tool ${tool.name}: sub-tool ${refused.tool} was refused (${refused.code}): ${d.redact(refused.message)}`, true);
    }
    if (!turn) throw new Error('the sub-turn ended without a result'); // unreachable: runTurn returns or throws
    d.log?.info('composite tool finished', { tool: tool.name, skill: skill.name, request_id: ctx.requestId, outcome: turn.outcome, tool_calls: turn.toolCalls.length, depth });
    if (turn.outcome === 'message') return textResult(turn.reply);
    const why =
      turn.outcome === 'gave_up'
        ? `the model gave no valid answer after ${turn.rejections} rejected outputs`
        : `it reached the limit of ${turn.toolCalls.length} tool calls without a final answer`;
    return textResult(`composite tool ${tool.name}: skill ${skill.name} did not finish: ${why}`, true);
  }
}
