// Tool rules (spec §5.4) and Skill rules (spec §5.5, §6), which reference each other.
import { resolveRef } from '../refs.ts';
import type { ResolvedPrimitive } from '../resolved.ts';
import type { Checker } from './context.ts';
import { describe, findCycles, isObj, specOf } from './context.ts';
import { schemaPatternIssues } from './schema-patterns.ts';

const TOOL = '§5.4';
const SKILL = '§5.5';

/**
 * A Tool with `mcp_source` but no `tool_name` bridges a whole MCP server (spec §6 example
 * `mcp-github`): the tools it serves are only known after `tools/list` at runtime.
 */
function isMcpServerBridge(t: ResolvedPrimitive): boolean {
  const spec = specOf(t);
  return !!spec && isObj(spec.mcp_source) && spec.mcp_source.tool_name === undefined;
}

export function checkTools(c: Checker): void {
  for (const t of c.m.tools) {
    const spec = specOf(t);
    if (!spec) continue;

    // §5.4: sandbox_ref / policy_ref bind the tool to a declared Sandbox / Policy.
    if (spec.sandbox_ref !== undefined) c.ref(t, ['sandbox_ref'], 'Sandbox', spec.sandbox_ref, TOOL);
    if (spec.policy_ref !== undefined) c.ref(t, ['policy_ref'], 'Policy', spec.policy_ref, TOOL);

    // tool.schema.json: skill_ref is "REQUIRED when composite is true" — stated in a description
    // only, the schema has no if/then for it.
    if (spec.composite === true && spec.skill_ref === undefined) {
      c.report(t, ['skill_ref'], 'tool-composite-skill-ref', TOOL, `${describe(t)}: composite: true requires skill_ref naming the Skill this tool wraps`);
    }
    if (spec.skill_ref !== undefined) c.ref(t, ['skill_ref'], 'Skill', spec.skill_ref, TOOL);

    // input_schema patterns run in the linear-time engine: one it cannot run is a manifest error now, not a
    // refusal at STARTING (docs/tools.md "User-written regular expressions").
    for (const i of schemaPatternIssues(spec.input_schema, ['input_schema'])) c.report(t, i.path, 'tool-schema-pattern', TOOL, `${describe(t)}: ${i.message}`);

    // §5.4: "The mcp:// URI scheme is RESERVED and MUST NOT be used. MCP server references MUST
    // use the mcp_source field with native MCP transport URIs (stdio:///, https://)."
    if (isObj(spec.mcp_source) && typeof spec.mcp_source.uri === 'string' && /^mcp:\/\//i.test(spec.mcp_source.uri)) {
      c.report(t, ['mcp_source', 'uri'], 'tool-mcp-uri-reserved', TOOL, `${describe(t)}: the mcp:// URI scheme is reserved and must not be used; use the MCP server's transport URI (stdio:///..., https://...)`);
    }
  }

  checkCompositeCycles(c);
}

export function checkSkills(c: Checker): void {
  const bridges = c.m.tools.some(isMcpServerBridge);
  for (const s of c.m.skills) {
    const spec = specOf(s);
    if (!spec) continue;

    // tools_required names the Tools the skill composes (§5.5, §4.2 "Skill composes → Tool[]").
    // A plain name that matches no declared Tool is tolerated when the manifest bridges a whole MCP
    // server: that server may provide it (MCP tool names such as `read_file` need not even be CKP
    // names), and its tool list is unknowable before tools/list. claw:// URIs stay strict.
    if (Array.isArray(spec.tools_required)) {
      spec.tools_required.forEach((ref: unknown, i: number) => {
        c.ref(s, ['tools_required', i], 'Tool', ref, SKILL, { tolerateUnknownPlainName: bridges });
      });
    }

    // §5.5: "If world_model_ref is present, it MUST resolve to a declared WorldModel ... validators
    // MUST reject dangling references." §6 repeats it for the manifest.
    if (spec.world_model_ref !== undefined) c.ref(s, ['world_model_ref'], 'WorldModel', spec.world_model_ref, SKILL);
  }
}

/**
 * A composite tool runs its skill, whose tools_required may include composite tools in turn.
 * If that chain comes back to the first tool the composite can never finish expanding.
 * (Not spelled out in the spec; follows from "composite wraps a Skill workflow".)
 */
function checkCompositeCycles(c: Checker): void {
  const m = c.m;
  const composites = m.tools.filter((t) => specOf(t)?.composite === true);
  if (composites.length === 0) return;
  const byName = new Map(m.tools.map((t) => [t.name, t] as const));
  const skillOf = (t: ResolvedPrimitive): ResolvedPrimitive | undefined => {
    const spec = specOf(t);
    if (!spec || spec.composite !== true || typeof spec.skill_ref !== 'string') return undefined;
    const r = resolveRef(m, 'Skill', spec.skill_ref);
    return r.ok ? r.primitive : undefined;
  };
  const edges = (name: string) => {
    const t = byName.get(name);
    const skill = t && skillOf(t);
    const req = specOf(skill)?.tools_required;
    if (!skill || !Array.isArray(req)) return [];
    const out: { to: string; skill: string }[] = [];
    for (const ref of req) {
      if (typeof ref !== 'string') continue;
      const r = resolveRef(m, 'Tool', ref);
      if (r.ok) out.push({ to: r.primitive.name, skill: skill.name });
    }
    return out;
  };
  const names = composites.map((t) => t.name);
  findCycles(names, edges, (from, _edge, path) => {
    const t = byName.get(from)!;
    const shown = path.map((n, i) => (i < path.length - 1 ? `${n} → skill '${skillOf(byName.get(n)!)?.name}'` : n)).join(' → ');
    c.report(t, ['skill_ref'], 'tool-composite-cycle', TOOL, `${describe(t)}: composite tools expand into themselves: ${shown}`);
  });
}
