// Binding the manifest's Tools to implementations at STARTING (docs/tools.md):
// mcp_source → MCP server; a `tools:` entry in claw.runtime.yaml → builtin or exec; otherwise a
// builtin of the same name. A tool with none of these is refused with a message saying how to bind it.
import { BUILTINS } from './builtins/index.ts';
import { createBuiltinImpl, type BuiltinDeps } from './builtins/impl.ts';
import { createExecImpl } from './exec.ts';
import { compileArgumentSchema, schemaProblem, type ArgumentCheck } from './json-schema.ts';
import type { BoundTool, ToolImpl } from './types.ts';
import type { ResolvedManifest, ResolvedPrimitive } from '../manifest/resolved.ts';
import type { RuntimeConfig } from '../config/runtime-config.ts';
import type { ProcessRunner } from './runner-port.ts';

export interface RegisteredTool {
  bound: BoundTool;
  check: ArgumentCheck;
}

/** What an MCP-served tool needs from the MCP layer (src/tools/mcp). */
export interface McpBinder {
  bind(tool: ResolvedPrimitive): Promise<{ impl: ToolImpl; description?: string; inputSchema?: Record<string, unknown> }>;
  close(): Promise<void>;
}

export interface RegistryDeps {
  builtins: BuiltinDeps;
  run: ProcessRunner;
  resolveSecrets(refs: string[]): Promise<Record<string, string>>;
  mcp?: McpBinder;
  /** `composite: true` tools (spec §5.4): run their skill as a sub-turn (src/agent/composite.ts). */
  composite?: CompositeTools;
}

/** How the registry binds a `composite: true` tool; the agent layer implements it (src/agent/composite.ts). */
export interface CompositeTools {
  impl(tool: ResolvedPrimitive): ToolImpl;
  /** The tool's own argument check, then the wrapped skill's `input_schema` when it declares one. */
  check(tool: ResolvedPrimitive, own: ArgumentCheck): ArgumentCheck;
}

export class ToolBindingError extends Error {}

export async function bindTools(m: ResolvedManifest, config: RuntimeConfig, deps: RegistryDeps): Promise<Map<string, RegisteredTool>> {
  const out = new Map<string, RegisteredTool>();
  const problems: string[] = [];
  for (const t of m.tools) {
    try {
      out.set(t.name, await bindOne(t, config, deps));
    } catch (e) {
      problems.push(e instanceof Error ? e.message : String(e));
    }
  }
  if (problems.length > 0) throw new ToolBindingError(problems.join('; '));
  return out;
}

async function bindOne(t: ResolvedPrimitive, config: RuntimeConfig, deps: RegistryDeps): Promise<RegisteredTool> {
  const spec = t.spec;
  let impl: ToolImpl;
  let description: string | undefined = spec.description;
  let inputSchema: Record<string, unknown> | undefined = spec.input_schema;
  const binding = config.tools?.[t.name];
  if (spec.composite === true) {
    if (!deps.composite) throw new ToolBindingError(`tool ${t.name}: composite tools are not available in this runtime`);
    impl = deps.composite.impl(t);
  } else if (spec.mcp_source) {
    if (!deps.mcp) throw new ToolBindingError(`tool ${t.name}: MCP tools are not available in this runtime`);
    const b = await deps.mcp.bind(t);
    impl = b.impl;
    // spec §5.4: with mcp_source, description and input_schema come from tools/list when absent.
    description ??= b.description;
    inputSchema ??= b.inputSchema;
  } else if (binding && 'exec' in binding) {
    impl = createExecImpl(binding.exec, { run: deps.run, resolveSecrets: deps.resolveSecrets });
  } else {
    const name = binding && 'builtin' in binding ? binding.builtin : t.name;
    const def = Object.hasOwn(BUILTINS, name) ? BUILTINS[name] : undefined;
    if (!def) {
      throw new ToolBindingError(
        `tool ${t.name} has no implementation: give it an mcp_source, or bind it in claw.runtime.yaml under tools.${t.name} (builtin: one of ${Object.keys(BUILTINS).join(', ')}, or exec: {bin, argv})`,
      );
    }
    impl = createBuiltinImpl(def, deps.builtins);
  }
  const schema = inputSchema ?? { type: 'object' };
  let check: ArgumentCheck;
  try {
    check = compileArgumentSchema(schema);
    const problem = schemaProblem(schema);
    if (problem) throw new Error(problem);
    check({}); // a dry run: an unresolvable $ref throws here, at binding, not at every call
    // §5.5: a composite's arguments must also satisfy its skill's input_schema.
    if (spec.composite === true) check = deps.composite!.check(t, check);
  } catch (e) {
    throw new ToolBindingError(`tool ${t.name}: input_schema is not a usable JSON Schema (${(e as Error).message})`);
  }
  return {
    bound: {
      name: t.name,
      description: description ?? '',
      inputSchema: schema,
      annotations: spec.annotations ?? {},
      category: t.labels.category,
      timeoutMs: spec.timeout_ms,
      sandboxRef: spec.sandbox_ref,
      policyRef: spec.policy_ref,
      impl,
    },
    check,
  };
}
