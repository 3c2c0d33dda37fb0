// What gets recorded: gate-audit (a tool call through the real runGates, with the pipeline's
// observe hook), protocol-audit (an output and its verdict), settings from Policy `audit`.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runGates } from '../../src/gates/pipeline.ts';
import { createGateAuditor } from '../../src/audit/gate-audit.ts';
import { recordValidation } from '../../src/audit/protocol-audit.ts';
import { auditSettings } from '../../src/audit/settings.ts';
import { validateOutput } from '../../src/femtoclaw/validate.ts';
import { compileArgumentSchema } from '../../src/tools/json-schema.ts';
import { ProtocolError, ErrorCode } from '../../src/protocol/errors.ts';
import { sha256Hex } from '../../src/audit/hash.ts';
import { boundTool, fakeImpl, makeCall, makeDeps, ok, policy, settle } from './helpers/gate-fakes.ts';

type Rec = { kind: string; data: Record<string, any> };
const sink = () => {
  const recs: Rec[] = [];
  return { recs, append: (kind: string, data: Record<string, unknown>) => void recs.push({ kind, data: JSON.parse(JSON.stringify(data)) }) };
};
const ALL = { logInputs: true, logOutputs: true, logApprovals: true };
const check = compileArgumentSchema({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] });

function setup(over: Parameters<typeof makeDeps>[0] = {}, s = ALL) {
  const log = sink();
  const deps = makeDeps(over);
  let t = 0;
  const auditor = createGateAuditor(log as any, s, () => (t += 5));
  deps.observe = auditor.observe;
  const impl = fakeImpl(async () => ok('ran'));
  const go = (callOver: Parameters<typeof makeCall>[0] = {}) => {
    const call = makeCall({ tool: boundTool({ impl }), args: { text: 'hi' }, ...callOver });
    return settle(Promise.resolve().then(() => auditor.run(call, 'agent', () => runGates(call, check, deps))));
  };
  return { log, deps, impl, go };
}
const kinds = (r: Rec[]) => r.map((x) => (x.data.decision ? `${x.kind}:${x.data.decision}` : x.data.outcome ? `${x.kind}:${x.data.outcome}` : x.kind));

test('allowed call: requested → authorized (allow) → started → finished ok, with args and result', async () => {
  const { log, impl, go } = setup();
  const r = await go();
  assert.equal(r.value, ok('ran'));
  assert.equal(kinds(log.recs), ['capability.requested', 'authorization.decided:allow', 'execution.started', 'execution.finished:ok']);
  assert.equal(log.recs[0].data, { tool: 't1', request_id: 'req-1', origin: 'agent', identity: 'test-identity', args: { text: 'hi' } });
  assert.equal(log.recs[3].data, { tool: 't1', request_id: 'req-1', outcome: 'ok', duration_ms: 5, result: [{ type: 'text', text: 'ran' }] });
  assert.is(impl.calls.length, 1);
});

test('log_inputs / log_outputs off: only the arguments hash, no result', async () => {
  const { log, go } = setup({}, { logInputs: false, logOutputs: false, logApprovals: true });
  await go();
  assert.is(log.recs[0].data.args, undefined);
  assert.is(log.recs[0].data.args_sha256, sha256Hex('{"text":"hi"}'));
  assert.is(log.recs[3].data.result, undefined);
});

test('refusals name their gate and nothing executes: schema, autonomy, policy', async () => {
  const cases: [Parameters<typeof makeDeps>[0], Parameters<typeof makeCall>[0], string, number, string | undefined, string | undefined][] = [
    [{}, { args: {} }, 'schema', ErrorCode.InvalidParams, undefined, undefined],
    [{ autonomy: 'observer' }, {}, 'autonomy', ErrorCode.PolicyDenied, 'autonomy:observer', undefined],
    [{}, { policies: [policy('p', { rules: [{ id: 'no', action: 'deny', scope: 'all' }] })] }, 'policy', ErrorCode.PolicyDenied, 'no', 'p'],
  ];
  for (const [d, c, gate, code, ruleId, pol] of cases) {
    const { log, impl, go } = setup(d);
    const r = await go(c);
    assert.is((r.error as ProtocolError).code, code);
    assert.equal(kinds(log.recs), ['capability.requested', 'authorization.decided:deny'], gate);
    assert.equal([log.recs[1].data.gate, log.recs[1].data.code], [gate, code]);
    // The deciding rule is in the record, as for allow / require-approval / audit-only.
    assert.equal([log.recs[1].data.rule_id, log.recs[1].data.policy], [ruleId, pol], gate);
    assert.is(impl.calls.length, 0);
  }
});

test('approval: requested then passed → executes; denied → approval.decided denied, nothing runs', async () => {
  const a = setup({ autonomy: 'supervised' });
  const p = a.go();
  await new Promise((r) => setTimeout(r, 0));
  a.deps.approvals.decide('req-1', 'approved');
  assert.equal((await p).value, ok('ran'));
  assert.equal(kinds(a.log.recs), ['capability.requested', 'authorization.decided:require-approval', 'approval.requested', 'approval.decided:passed', 'execution.started', 'execution.finished:ok']);
  assert.equal(a.log.recs[2].data, { tool: 't1', request_id: 'req-1', rule_id: 'autonomy:supervised', timeout_ms: 300000 });

  const b = setup({ autonomy: 'supervised' });
  const q = b.go();
  await new Promise((r) => setTimeout(r, 0));
  b.deps.approvals.decide('req-1', 'denied');
  assert.is(((await q).error as ProtocolError).code, ErrorCode.ApprovalDenied);
  assert.equal(kinds(b.log.recs), ['capability.requested', 'authorization.decided:require-approval', 'approval.requested', 'approval.decided:denied']);
  assert.is(b.impl.calls.length, 0);

  const c = setup({ autonomy: 'supervised' }, { ...ALL, logApprovals: false });
  const w = c.go();
  await new Promise((r) => setTimeout(r, 0));
  c.deps.approvals.decide('req-1', 'denied');
  await w;
  assert.equal(kinds(c.log.recs), ['capability.requested', 'authorization.decided:require-approval']);
});

test('audit-only rule and a failing tool: decision audit-only, outcome failed with the code', async () => {
  const { log, deps, go } = setup();
  const aud = policy('aud', { rules: [{ id: 'watch', action: 'audit-only', scope: 'all' }] });
  const boom = fakeImpl(async () => {
    throw new ProtocolError(ErrorCode.ToolTimeout, 'Tool execution timeout: t1 exceeded 5 ms');
  });
  const r = await go({ policies: [aud], tool: boundTool({ impl: boom }) });
  assert.is((r.error as ProtocolError).code, ErrorCode.ToolTimeout);
  assert.equal(kinds(log.recs), ['capability.requested', 'authorization.decided:audit-only', 'execution.started', 'execution.finished:failed']);
  assert.equal([log.recs[1].data.rule_id, log.recs[1].data.policy, log.recs[3].data.code], ['watch', 'aud', ErrorCode.ToolTimeout]);
  void deps;
});

test('an isError result is outcome error', async () => {
  const { log, go } = setup();
  await go({ tool: boundTool({ impl: fakeImpl(async () => ({ content: [{ type: 'text', text: 'no' }], isError: true })) }) });
  assert.is(log.recs[3].data.outcome, 'error');
});

test('an audit write failure before execution refuses the call: nothing runs unrecorded', async () => {
  const deps = makeDeps();
  const impl = fakeImpl(async () => ok('ran'));
  const auditor = createGateAuditor(
    {
      append: (kind: string) => {
        if (kind === 'execution.started') throw new Error('disk full');
      },
    } as any,
    ALL,
    () => 0,
  );
  deps.observe = auditor.observe;
  const call = makeCall({ tool: boundTool({ impl }), args: { text: 'x' } });
  const r = await settle(Promise.resolve().then(() => auditor.run(call, 'operator', () => runGates(call, check, deps))));
  assert.ok(r.error);
  assert.is(impl.calls.length, 0);
});

test('recordValidation: received (size, hash, output) then validated or rejected with step and reason', () => {
  const reg = new Map([['echo', check]]);
  const raw = '{"tool_call":{"tool":"echo","args":{"text":"hi"}}}';
  const log = sink();
  recordValidation(log, { logInputs: true }, raw, validateOutput(raw, reg), { turn: 't1' });
  assert.equal(log.recs, [
    { kind: 'protocol.received', data: { turn: 't1', bytes: raw.length, sha256: sha256Hex(raw), output: raw } },
    { kind: 'protocol.validated', data: { turn: 't1', form: 'tool_call', tool: 'echo' } },
  ]);
  const bad = '{"tool_call":{"tool":"echo","args":{}}}';
  const log2 = sink();
  recordValidation(log2, { logInputs: false }, new TextEncoder().encode(bad), validateOutput(bad, reg));
  assert.equal(log2.recs, [
    { kind: 'protocol.received', data: { bytes: bad.length, sha256: sha256Hex(bad) } },
    {
      kind: 'protocol.rejected',
      data: { step: 'arguments', reason: 'args_schema', detail: 'arguments do not match the input_schema of "echo"', tool: 'echo', issues: [{ path: '', keyword: 'required' }] },
    },
  ]);
});

test('settings: none declared → off for operator calls, on for the agent; sections OR together', () => {
  assert.equal(auditSettings([]), { enabled: false, logInputs: true, logOutputs: false, logApprovals: true, destination: 'file', notes: [] });
  assert.is(auditSettings([], { forAgent: true }).enabled, true);
  const s = auditSettings([
    { name: 'a', spec: { audit: { log_inputs: false, log_outputs: false, retention: '90d', destination: 'sqlite' } } },
    { name: 'b', spec: { audit: { log_inputs: false, log_outputs: true, log_approvals: false, retention: '24h', destination: 'file' } } },
    { name: 'c', spec: {} },
  ]);
  assert.equal(
    [s.enabled, s.logInputs, s.logOutputs, s.logApprovals, s.retentionSeconds, s.destination],
    [true, false, true, true, 90 * 86400, 'sqlite'],
  );
  // Every destination is implemented now (the sinks add a note only when a copy cannot be made).
  assert.equal(s.notes, []);
  assert.equal(auditSettings([{ name: 'x', spec: { audit: {} } }]), { enabled: true, logInputs: true, logOutputs: false, logApprovals: true, destination: 'file', notes: [] });
});

test.run();
