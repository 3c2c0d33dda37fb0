// The capability registry the validator checks names and arguments against (FemtoClaw §7: "be
// registered with runtime"). At run time it is the tools module's bound tools, so the validator and
// the schema gate use the very same compiled check; `claw protocol check` builds it from the
// manifest alone, without starting MCP servers or exec bindings.
import { compileArgumentSchema, schemaProblem, type ArgumentCheck } from '../tools/json-schema.ts';
import type { ResolvedManifest } from '../manifest/resolved.ts';
import type { CapabilityRegistry } from './validate.ts';

/** From the tools module's registry (src/tools/registry.ts bindTools). */
export function capabilitiesOf(tools: ReadonlyMap<string, { check: ArgumentCheck }>): CapabilityRegistry {
  const out = new Map<string, ArgumentCheck>();
  for (const [name, t] of tools) out.set(name, t.check);
  return out;
}

export interface ManifestCapabilities {
  registry: CapabilityRegistry;
  /** Things the check cannot know offline, said once each (never silent). */
  notes: string[];
}

/**
 * From the manifest's Tool primitives, the way bindTools compiles them: input_schema, or
 * `{type: object}` when absent. An MCP tool's schema may come from its server's tools/list at run
 * time; offline it is checked against `{type: object}` and a note says so.
 */
export function capabilitiesFromManifest(m: ResolvedManifest): ManifestCapabilities {
  const out = new Map<string, ArgumentCheck>();
  const notes: string[] = [];
  for (const t of m.tools) {
    const schema = (t.spec.input_schema as Record<string, unknown> | undefined) ?? { type: 'object' };
    if (!t.spec.input_schema && t.spec.mcp_source) notes.push(`tool ${t.name}: input_schema comes from its MCP server at run time; checked here against {"type":"object"}`);
    const problem = schemaProblem(schema);
    if (problem) {
      notes.push(`tool ${t.name}: input_schema is not usable (${problem}); the tool is left out`);
      continue;
    }
    try {
      const check = compileArgumentSchema(schema);
      check({});
      out.set(t.name, check);
    } catch (e) {
      notes.push(`tool ${t.name}: input_schema is not usable (${(e as Error).message}); the tool is left out`);
    }
  }
  return { registry: out, notes };
}
