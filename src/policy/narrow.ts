// `context.policy` overrides on claw.tool.call (spec §9.3.2) can only NARROW what the manifest
// allows, never widen it (spec §10.3 trust hierarchy: a layer can only grant what its parent
// allows). The call is evaluated twice — against the manifest's policies and against the override
// policy — and the two decisions are combined here: the most restrictive action wins.
//
//   deny  >  require-approval  >  audit-only  >  allow
//
// The winning decision is returned whole (its rule, reason, approval params and `implicit` flag),
// so approval parameters always come from the rule that required approval. On a tie the manifest
// decision (`a`) stands, with one exception: when both require approval and the manifest rule
// would fall back to `allow` on timeout (`default_if_timeout: allow`) while the override's would
// not, the override's decision is taken — otherwise the override could not tighten the timeout
// fallback. Timeouts are not merged (a shorter timeout is not "more restrictive" when the
// fallback is allow).
import type { Decision, RuleAction } from './evaluate.ts';

export const RESTRICTIVENESS: Readonly<Record<RuleAction, number>> = {
  allow: 0,
  'audit-only': 1,
  'require-approval': 2,
  deny: 3,
};

/** `a`: the manifest decision; `b`: the override policy's decision. */
export function narrowDecisions(a: Decision, b: Decision): Decision {
  const ra = RESTRICTIVENESS[a.action];
  const rb = RESTRICTIVENESS[b.action];
  if (rb > ra) return b;
  if (rb < ra) return a;
  if (a.action === 'require-approval' && fallsBackToAllow(a) && !fallsBackToAllow(b)) return b;
  return a;
}

function fallsBackToAllow(d: Decision): boolean {
  return d.rule?.approval?.default_if_timeout === 'allow';
}
