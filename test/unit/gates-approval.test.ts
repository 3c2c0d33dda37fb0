// Gate 4 (approval) through runGates with a manual clock: the announced notification, approve,
// deny, timeout with default deny/allow, session end, concurrent approvals (docs/tools.md step 4).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runGates } from '../../src/gates/pipeline.ts';
import { compileArgumentSchema } from '../../src/tools/json-schema.ts';
import { boundTool, fakeImpl, makeCall, makeDeps, ok, policy, settle, wire } from './helpers/gate-fakes.ts';

const check = compileArgumentSchema({ type: 'object' });
const SECRET = 'S3cr3t-value-9f8e';
const ask = (approval?: any, reason?: string) => policy('p', { rules: [{ id: 'ask', action: 'require-approval', scope: 'all', ...(reason ? { reason } : {}), ...(approval ? { approval } : {}) }] });

test('supervised: announces claw.tool.approval_requested (secrets redacted), approve runs the call', async () => {
  const deps = makeDeps({ autonomy: 'supervised', secrets: [SECRET] });
  const impl = fakeImpl(async () => ok('ran'));
  const p = runGates(makeCall({ tool: boundTool({ impl }), args: { text: `key ${SECRET}`, n: 1 } }), check, deps);
  assert.equal(deps.announced, [
    {
      jsonrpc: '2.0',
      method: 'claw.tool.approval_requested',
      params: {
        request_id: 'req-1',
        tool: 't1',
        arguments: { text: 'key [REDACTED]', n: 1 },
        rule_id: 'autonomy:supervised',
        reason: 'identity test-identity is supervised and t1 is not read-only',
        timeout_seconds: 300,
        expires_at: '2026-02-22T10:35:00.000Z',
      },
    },
  ]);
  assert.is(impl.calls.length, 0);
  assert.ok(deps.approvals.has('req-1'));
  assert.ok(deps.approvals.decide('req-1', 'approved'));
  assert.equal(await p, ok('ran'));
  assert.is(impl.calls.length, 1);
  assert.is(deps.approvals.size, 0);
  assert.is(deps.clock.pending, 0, 'the approval timer is cancelled');
  assert.equal(
    deps.log.entries.filter((e) => e.msg.startsWith('approval')).map((e) => [e.msg, e.fields?.outcome]),
    [
      ['approval requested', undefined],
      ['approval outcome', 'approved'],
    ],
  );
  assert.not.ok(deps.log.text().includes(SECRET));
});

test('policy require-approval: no reason key when the rule has none; deny → -32013 with the reason', async () => {
  const deps = makeDeps();
  const impl = fakeImpl(async () => ok('ran'));
  const p = runGates(makeCall({ tool: boundTool({ impl }), policies: [ask({ timeout_seconds: 60 })] }), check, deps);
  assert.equal(deps.announced[0].params, { request_id: 'req-1', tool: 't1', arguments: {}, rule_id: 'ask', timeout_seconds: 60, expires_at: '2026-02-22T10:31:00.000Z' });
  deps.approvals.decide('req-1', 'denied', 'not today');
  assert.equal(wire((await settle(p)).error), { code: -32013, message: 'Approval denied: not today', data: { request_id: 'req-1', tool: 't1', reason: 'not today' } });
  const d2 = makeDeps();
  const p2 = runGates(makeCall({ tool: boundTool({ impl }), policies: [ask(undefined, 'why')] }), check, d2);
  assert.is((d2.announced[0].params as any).reason, 'why');
  d2.approvals.decide('req-1', 'denied');
  assert.equal(wire((await settle(p2)).error), { code: -32013, message: 'Approval denied', data: { request_id: 'req-1', tool: 't1' } });
  assert.is(impl.calls.length, 0);
});

test('timeout: default deny → -32012; default allow → runs', async () => {
  const deps = makeDeps();
  const impl = fakeImpl(async () => ok('ran'));
  const p = runGates(makeCall({ tool: boundTool({ impl }), policies: [ask({ timeout_seconds: 10 })] }), check, deps);
  deps.clock.advance(9_999);
  assert.ok(deps.approvals.has('req-1'));
  deps.clock.advance(1);
  assert.equal(wire((await settle(p)).error), { code: -32012, message: 'Approval timeout: no decision within 10 s', data: { request_id: 'req-1', tool: 't1', timeout_seconds: 10 } });
  const p2 = runGates(makeCall({ requestId: 'req-2', tool: boundTool({ impl }), policies: [ask({ timeout_seconds: 10, default_if_timeout: 'allow' })] }), check, deps);
  deps.clock.advance(10_000);
  assert.equal(await p2, ok('ran'));
  assert.is(impl.calls.length, 1);
  // supervised: the wait is defaultApprovalTimeoutMs, then denied
  const sup = makeDeps({ autonomy: 'supervised' });
  sup.defaultApprovalTimeoutMs = 42_000;
  const p3 = runGates(makeCall(), check, sup);
  assert.is((sup.announced[0].params as any).timeout_seconds, 42);
  sup.clock.advance(42_000);
  assert.is(wire((await settle(p3)).error).code, -32012);
});

test('session end: waiting calls are released with -32012 (signal abort and cancelAll)', async () => {
  const deps = makeDeps({ autonomy: 'supervised' });
  const ac = new AbortController();
  const p = runGates(makeCall({ signal: ac.signal }), check, deps);
  ac.abort();
  assert.equal(wire((await settle(p)).error), { code: -32012, message: 'Approval timeout: the session ended before a decision', data: { request_id: 'req-1', tool: 't1' } });
  const p2 = runGates(makeCall({ requestId: 'a' }), check, deps);
  const p3 = runGates(makeCall({ requestId: 'b' }), check, deps);
  deps.approvals.cancelAll();
  assert.is(wire((await settle(p2)).error).code, -32012);
  assert.is(wire((await settle(p3)).error).code, -32012);
  assert.is(deps.clock.pending, 0);
  // an already-aborted session never waits
  const dead = new AbortController();
  dead.abort();
  assert.is(wire((await settle(runGates(makeCall({ requestId: 'c', signal: dead.signal }), check, deps))).error).code, -32012);
});

test('concurrent approvals: each call waits on its own id; unknown id is not acknowledged', async () => {
  const deps = makeDeps({ autonomy: 'supervised' });
  const impl = fakeImpl(async (args) => ok(String(args.n)));
  const pa = runGates(makeCall({ requestId: 'a', args: { n: 1 }, tool: boundTool({ impl }) }), check, deps);
  const pb = runGates(makeCall({ requestId: 'b', args: { n: 2 }, tool: boundTool({ impl }) }), check, deps);
  const pc = runGates(makeCall({ requestId: 'c', args: { n: 3 }, tool: boundTool({ impl }) }), check, deps);
  assert.equal(deps.announced.map((n) => (n.params as any).request_id), ['a', 'b', 'c']);
  assert.is(deps.approvals.size, 3);
  assert.is(deps.approvals.decide('zzz', 'approved'), false);
  assert.ok(deps.approvals.decide('b', 'approved'));
  assert.equal(await pb, ok('2'));
  assert.ok(deps.approvals.has('a') && deps.approvals.has('c'));
  deps.approvals.decide('a', 'denied');
  assert.is(wire((await settle(pa)).error).code, -32013);
  assert.is(deps.approvals.decide('a', 'approved'), false, 'decided once');
  deps.clock.advance(300_000);
  assert.is(wire((await settle(pc)).error).code, -32012);
  assert.equal(impl.calls.length, 1);
});

test.run();
