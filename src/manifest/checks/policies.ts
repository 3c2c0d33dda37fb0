// Policy rules, spec §5.9.
import type { Checker } from './context.ts';
import { describe, isObj, specOf } from './context.ts';

const S = '§5.9';

export function checkPolicies(c: Checker): void {
  // Rule ids seen so far across all policies, in manifest order: §5.9 evaluates all referenced
  // policies "as a single concatenated rule list", so an id must name one rule of that list.
  const seen = new Map<string, { policy: string; index: number }>();

  for (const p of c.m.policies) {
    const spec = specOf(p);
    if (!spec) continue;

    // "The rules array MUST contain at least one entry" is the schema's minItems 1, applied before.
    if (!Array.isArray(spec.rules)) continue;

    spec.rules.forEach((rule: unknown, index: number) => {
      if (!isObj(rule) || typeof rule.id !== 'string') return;
      const first = seen.get(rule.id);
      if (first) {
        const where = first.policy === p.name ? `rules[${first.index}]` : `rules[${first.index}] of Policy '${first.policy}'`;
        c.report(p, ['rules', index, 'id'], 'policy-rule-id-duplicate', S, `${describe(p)}: rule id '${rule.id}' is already used by ${where}; policies form one first-match-wins rule list, so the id would not identify the matching rule (e.g. in -32011 error data)`);
      } else seen.set(rule.id, { policy: p.name, index });
    });
  }
}
