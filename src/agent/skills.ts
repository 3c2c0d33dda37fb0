// Skills (spec §5.5) in the agent loop: which skills apply, which skill a tool call is made for, and
// how a skill's `permissions` narrow the sandbox for its calls (never widen: narrowSandbox intersects).
import type { ResolvedManifest, ResolvedPrimitive } from '../manifest/resolved.ts';
import type { SandboxSpec } from '../manifest/schema/index.ts';
import type { SkillDescriptor } from './prompt.ts';

export interface SkillPermissions {
  network?: boolean;
  filesystem?: 'none' | 'read-only' | 'write-workspace' | 'full';
  approval_required?: boolean;
}

/**
 * A skill applies when every tool it requires is bound on this runtime (§5.5 tools_required). A skill that
 * a bound composite tool wraps (§5.4 skill_ref) is offered as that tool instead: its instruction is the
 * composite's sub-turn prompt, and repeating it in the agent's prompt would invite the model to run the
 * workflow step by step instead of as the one atomic call (docs/agent.md "Composite tools").
 */
export function applicableSkills(m: ResolvedManifest, bound: ReadonlySet<string>): SkillDescriptor[] {
  const wrapped = new Set(m.tools.filter((t) => t.spec.composite === true && bound.has(t.name)).map((t) => t.spec.skill_ref));
  return m.skills
    .filter((s) => !wrapped.has(s.name) && ((s.spec.tools_required as string[] | undefined) ?? []).every((t) => bound.has(t)))
    .map((s) => ({ name: s.name, description: String(s.spec.description ?? ''), instruction: String(s.spec.instruction ?? '') }));
}

/**
 * The skill a model's tool call is attributed to: FemtoClaw's tool_call names a tool, not a skill, so
 * the skills that require the tool are its candidates. Several candidates → the one whose permissions
 * are strictest names the call (policy scope `skill`); the permissions that bind the call are those of
 * every candidate together (`callPermissions`), so attributing a call can never loosen anything.
 */
export function skillForTool(m: ResolvedManifest, tool: string): ResolvedPrimitive | undefined {
  return skillsForTool(m, tool).sort((a, b) => strictness(b.spec.permissions) - strictness(a.spec.permissions))[0];
}

/** Every skill whose `tools_required` names the tool (§5.5), in manifest order. */
export function skillsForTool(m: ResolvedManifest, tool: string): ResolvedPrimitive[] {
  return m.skills.filter((s) => ((s.spec.tools_required as string[] | undefined) ?? []).includes(tool));
}

const FS_ORDER = ['full', 'write-workspace', 'read-only', 'none'] as const;

/**
 * The permissions a tool call is held to: the intersection of every candidate skill's permissions.
 * Picking one candidate would drop another's restriction when neither is stricter in every respect
 * (one denies the network, the other the filesystem). Network is denied if any denies it, the
 * filesystem is the most restrictive declared, approval is required if any requires it. No candidate
 * declaring permissions → undefined (nothing to narrow).
 */
export function callPermissions(candidates: readonly ResolvedPrimitive[]): SkillPermissions | undefined {
  const declared = candidates.map((s) => s.spec.permissions as SkillPermissions | undefined).filter((p): p is SkillPermissions => p !== undefined);
  if (declared.length === 0) return undefined;
  const out: SkillPermissions = {};
  if (declared.some((p) => p.network === false)) out.network = false;
  const fs = Math.max(...declared.map((p) => FS_ORDER.indexOf(p.filesystem ?? 'full')));
  if (fs > 0) out.filesystem = FS_ORDER[fs];
  if (declared.some((p) => p.approval_required === true)) out.approval_required = true;
  return out;
}

function strictness(p: SkillPermissions | undefined): number {
  if (!p) return 0;
  const fs = { none: 3, 'read-only': 2, 'write-workspace': 1, full: 0 }[p.filesystem ?? 'full'];
  return fs + (p.network === false ? 4 : 0) + (p.approval_required ? 8 : 0);
}

/**
 * The sandbox a skill's permissions allow, to intersect with the tool's own (§5.5 permissions).
 * Level `none`, so the intersection keeps the tool's isolation level; unset permissions allow all.
 * `write-workspace`: read-only everywhere, read-write in the workspace directory.
 */
export function skillSandbox(p: SkillPermissions | undefined, workspaceDir: string): SandboxSpec | undefined {
  if (!p || (p.network !== false && (p.filesystem === undefined || p.filesystem === 'full'))) return undefined;
  const filesystem =
    p.filesystem === 'none'
      ? { mode: 'deny' as const }
      : p.filesystem === 'read-only'
        ? { mode: 'read-only' as const }
        : p.filesystem === 'write-workspace'
          ? { mode: 'scoped' as const, mount_paths: [{ path: '/', permissions: 'ro' as const }, { path: workspaceDir, permissions: 'rw' as const }] }
          : { mode: 'full' as const };
  return {
    level: 'none',
    capabilities: { network: { mode: p.network === false ? 'deny' : 'allow-all' }, filesystem },
  } as SandboxSpec;
}
