// Sandbox rules, spec §5.8: "Values in blocked_patterns are matched as regular expressions", so a
// pattern that is not one is a manifest error now, not a surprise at the first shell call.
import { validateShellRules } from '../../sandbox/shell-rules.ts';
import type { Checker } from './context.ts';
import { describe, specOf } from './context.ts';

const S = '§5.8';

export function checkSandboxes(c: Checker): void {
  const all = [...(c.m.sandbox ? [c.m.sandbox] : [])];
  for (const sb of all) {
    const spec = specOf(sb);
    if (!spec) continue;
    for (const i of validateShellRules(spec.capabilities?.shell)) {
      c.report(sb, i.path, 'sandbox-shell-rule', S, `${describe(sb)}: ${i.message}`);
    }
  }
}
