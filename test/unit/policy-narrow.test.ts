import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ApprovalParams, Decision, RuleAction } from '../../src/policy/evaluate.ts';
import { narrowDecisions } from '../../src/policy/narrow.ts';

const d = (action: RuleAction, id: string, approval?: ApprovalParams): Decision => ({
  action,
  rule: approval ? { id, policy: id.split('/')[0], approval } : { id, policy: id.split('/')[0] },
  implicit: false,
});

const A = 'manifest/r';
const B = 'override/r';

test('4×4: the most restrictive action wins (deny > require-approval > audit-only > allow)', () => {
  // [manifest action, override action, winner: 'a' | 'b']
  const table: [RuleAction, RuleAction, 'a' | 'b'][] = [
    ['allow', 'allow', 'a'],
    ['allow', 'audit-only', 'b'],
    ['allow', 'require-approval', 'b'],
    ['allow', 'deny', 'b'],
    ['audit-only', 'allow', 'a'],
    ['audit-only', 'audit-only', 'a'],
    ['audit-only', 'require-approval', 'b'],
    ['audit-only', 'deny', 'b'],
    ['require-approval', 'allow', 'a'],
    ['require-approval', 'audit-only', 'a'],
    ['require-approval', 'require-approval', 'a'],
    ['require-approval', 'deny', 'b'],
    ['deny', 'allow', 'a'],
    ['deny', 'audit-only', 'a'],
    ['deny', 'require-approval', 'a'],
    ['deny', 'deny', 'a'],
  ];
  for (const [ma, ob, who] of table) {
    const a = d(ma, A);
    const b = d(ob, B);
    const got = narrowDecisions(a, b);
    assert.is(got, who === 'a' ? a : b, `${ma} × ${ob}`);
  }
});

test('approval params come from the rule that required approval', () => {
  const a = d('allow', A);
  const b = d('require-approval', B, { timeout_seconds: 30, default_if_timeout: 'deny' });
  assert.equal(narrowDecisions(a, b).rule, { id: B, policy: 'override', approval: { timeout_seconds: 30, default_if_timeout: 'deny' } });
  assert.equal(narrowDecisions(b, a).rule?.approval, { timeout_seconds: 30, default_if_timeout: 'deny' });
});

test('both require approval: an override cannot loosen the timeout fallback, but can tighten it', () => {
  const allowOnTimeout = d('require-approval', A, { timeout_seconds: 60, default_if_timeout: 'allow' });
  const denyOnTimeout = d('require-approval', B, { timeout_seconds: 600, default_if_timeout: 'deny' });
  const unspecified = d('require-approval', B, { timeout_seconds: 10 });
  assert.is(narrowDecisions(allowOnTimeout, denyOnTimeout), denyOnTimeout);
  assert.is(narrowDecisions(allowOnTimeout, unspecified), unspecified);
  assert.is(narrowDecisions(denyOnTimeout, allowOnTimeout), denyOnTimeout);
  const bothAllow = d('require-approval', B, { default_if_timeout: 'allow' });
  assert.is(narrowDecisions(allowOnTimeout, bothAllow), allowOnTimeout);
});

test('implicit deny is kept whole (and wins over an explicit allow)', () => {
  const implicit: Decision = { action: 'deny', implicit: true };
  assert.is(narrowDecisions(d('allow', A), implicit), implicit);
  assert.is(narrowDecisions(implicit, d('allow', B)), implicit);
});

test.run();
