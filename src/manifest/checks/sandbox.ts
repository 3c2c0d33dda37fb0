// Sandbox rules, spec §5.8: "Values in blocked_patterns are matched as regular expressions", so a
// pattern that is not one is a manifest error now, not a surprise at the first shell call. The rules
// themselves run in src/sandbox/shell-rules.ts, in the same linear-time engine.
import type { SandboxSpec } from '../schema/index.ts';
import { linearRegexProblem } from '../../regex/linear-regex.ts';
import type { Checker } from './context.ts';
import { describe, specOf } from './context.ts';

const S = '§5.8';

type ShellCaps = NonNullable<NonNullable<SandboxSpec['capabilities']>['shell']>;

export interface ShellRuleIssue {
  path: (string | number)[];
  message: string;
}

/** Paths are relative to the Sandbox `spec`. */
export function validateShellRules(shell: ShellCaps | undefined): ShellRuleIssue[] {
  const issues: ShellRuleIssue[] = [];
  (shell?.blocked_patterns ?? []).forEach((p, i) => {
    const problem = linearRegexProblem(p);
    if (problem) issues.push({ path: ['capabilities', 'shell', 'blocked_patterns', i], message: `blocked pattern cannot be used (patterns run in linear time, docs/tools.md): ${problem}` });
  });
  (shell?.blocked_commands ?? []).forEach((c, i) => {
    // Whitespace only: the sandbox's normalised form of it is empty, which it skips.
    if (c.trim() === '') issues.push({ path: ['capabilities', 'shell', 'blocked_commands', i], message: 'empty command pattern matches nothing' });
  });
  return issues;
}

/**
 * A sandbox mounts its own /proc and /dev (src/sandbox/bwrap-args.ts): a mount_path there would show the host's
 * processes (their root directories and open files, writable sysctls) or devices, so it is refused at every
 * level — here on the paths as written, at STARTING and at each launch on real paths.
 */
export function validateMountPaths(fs: NonNullable<NonNullable<SandboxSpec['capabilities']>['filesystem']> | undefined): ShellRuleIssue[] {
  const issues: ShellRuleIssue[] = [];
  (fs?.mount_paths ?? []).forEach((m, i) => {
    if (typeof m?.path !== 'string') return;
    const p = m.path.replace(/\/{2,}/g, '/');
    const own = ['/proc', '/dev'].find((d) => p === d || p.startsWith(`${d}/`));
    if (own) issues.push({ path: ['capabilities', 'filesystem', 'mount_paths', i, 'path'], message: `mount_path ${m.path} is inside ${own}: the sandbox mounts its own ${own} (the host's would show its processes or devices)` });
  });
  return issues;
}

export function checkSandboxes(c: Checker): void {
  const all = [...(c.m.sandbox ? [c.m.sandbox] : [])];
  for (const sb of all) {
    const spec = specOf(sb);
    if (!spec) continue;
    for (const i of validateShellRules(spec.capabilities?.shell)) {
      c.report(sb, i.path, 'sandbox-shell-rule', S, `${describe(sb)}: ${i.message}`);
    }
    for (const i of validateMountPaths(spec.capabilities?.filesystem)) {
      c.report(sb, i.path, 'sandbox-mount-path', S, `${describe(sb)}: ${i.message}`);
    }
  }
}
