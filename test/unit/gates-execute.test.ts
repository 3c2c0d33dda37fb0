// Gate 6b, executeGate: timeout → -32014 (and the impl's signal aborted), the ceiling when an impl
// ignores abort, session abort, SandboxViolation → -32010, a throwing impl → isError, the
// max_output_bytes cap, output secret scanning and redaction of known secrets (docs/tools.md step 6).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { executeGate } from '../../src/gates/execute-gate.ts';
import { SandboxViolation, type ToolResult } from '../../src/tools/types.ts';
import { boundTool, fakeImpl, makeCall, makeDeps, ok, policy, settle, wire } from './helpers/gate-fakes.ts';
import { tick } from './helpers/fakes.ts';

const j = (...p: string[]) => p.join('');
const GH_TOKEN = j('ghp', '_1234567890abcdefghijABCDEFGHIJ123456');
const SECRET = 'S3cr3t-value-9f8e';
const never = () => new Promise<ToolResult>(() => {});
const untilAborted = (signal: AbortSignal) => new Promise<ToolResult>((_, rej) => signal.addEventListener('abort', () => rej(new Error('killed'))));

test('success: the impl gets args, request id, the sandbox and the smaller timeout', async () => {
  const deps = makeDeps();
  const impl = fakeImpl(async (a) => ok(`hi ${a.who}`));
  const sandbox = { level: 'none' as const, resource_limits: { timeout_ms: 500 } };
  const r = await executeGate(makeCall({ tool: boundTool({ impl, timeoutMs: 1000 }), args: { who: 'bob' }, sandbox }), deps, deps.redactText, deps.redactValue);
  assert.equal(r, ok('hi bob'));
  assert.is(impl.calls[0].timeoutMs, 500);
  assert.is(impl.calls[0].requestId, 'req-1');
  assert.is(impl.calls[0].sandbox, sandbox);
  assert.is(impl.calls[0].signal.aborted, false);
  assert.is(deps.clock.pending, 0, 'timers cancelled');
  const r2 = await executeGate(makeCall({ tool: boundTool({ impl, timeoutMs: 200 }), sandbox }), deps, deps.redactText, deps.redactValue);
  assert.equal(r2, ok('hi undefined'));
  assert.is(impl.calls[1].timeoutMs, 200);
  await executeGate(makeCall({ tool: boundTool({ impl }) }), deps, deps.redactText, deps.redactValue);
  assert.is(impl.calls[2].timeoutMs, undefined);
});

test('timeout → -32014 and the impl signal is aborted', async () => {
  const deps = makeDeps();
  const impl = fakeImpl(async (_a, ctx) => untilAborted(ctx.signal));
  const p = settle(executeGate(makeCall({ tool: boundTool({ impl, timeoutMs: 100 }) }), deps, deps.redactText, deps.redactValue));
  await tick();
  deps.clock.advance(99);
  assert.is(impl.calls[0].signal.aborted, false);
  deps.clock.advance(1);
  assert.is(impl.calls[0].signal.aborted, true);
  assert.equal(wire((await p).error), { code: -32014, message: 'Tool execution timeout: t1 exceeded 100 ms', data: { tool: 't1', timeout_ms: 100 } });
  assert.is(deps.clock.pending, 0);
  // an impl that returns normally after the abort is still a timeout
  const late = fakeImpl(async (_a, ctx) => new Promise((res) => ctx.signal.addEventListener('abort', () => res(ok('partial')))));
  const p2 = settle(executeGate(makeCall({ tool: boundTool({ impl: late }), sandbox: { level: 'none', resource_limits: { timeout_ms: 50 } } }), deps, deps.redactText, deps.redactValue));
  await tick();
  deps.clock.advance(50);
  assert.is(wire((await p2).error).code, -32014);
});

test('an impl that ignores abort: answered -32014 at killGraceMs + 1000 after the timeout', async () => {
  const deps = makeDeps();
  deps.killGraceMs = 500;
  const impl = fakeImpl(async () => never());
  let done = false;
  const p = settle(executeGate(makeCall({ tool: boundTool({ impl, timeoutMs: 100 }) }), deps, deps.redactText, deps.redactValue)).then((r) => ((done = true), r));
  await tick();
  deps.clock.advance(100);
  await tick();
  assert.is(done, false);
  deps.clock.advance(1499);
  await tick();
  assert.is(done, false);
  deps.clock.advance(1);
  assert.is(wire((await p).error).code, -32014);
});

test('session abort: the impl signal aborts, the call is refused -32600 (STOPPING)', async () => {
  const deps = makeDeps();
  const ac = new AbortController();
  const impl = fakeImpl(async (_a, ctx) => untilAborted(ctx.signal));
  const p = settle(executeGate(makeCall({ tool: boundTool({ impl }), signal: ac.signal }), deps, deps.redactText, deps.redactValue));
  await tick();
  ac.abort();
  assert.is(impl.calls[0].signal.aborted, true);
  assert.equal(wire((await p).error), { code: -32600, message: 'Invalid request: t1 was cancelled because the agent is stopping', data: { state: 'STOPPING', tool: 't1' } });
});

test('SandboxViolation → -32010; a throwing impl → isError result (logged), ProtocolError passes through', async () => {
  const deps = makeDeps();
  const v = fakeImpl(async () => {
    throw new SandboxViolation('filesystem', '/etc/shadow is inside denied path /etc/shadow');
  });
  assert.equal(wire((await settle(executeGate(makeCall({ tool: boundTool({ impl: v }) }), deps, deps.redactText, deps.redactValue))).error), {
    code: -32010,
    message: 'Sandbox denied: /etc/shadow is inside denied path /etc/shadow',
    data: { tool: 't1', rule: 'filesystem' },
  });
  const boom = fakeImpl(async () => {
    throw new Error('boom');
  });
  assert.equal(await executeGate(makeCall({ tool: boundTool({ impl: boom }) }), deps, deps.redactText, deps.redactValue), { content: [{ type: 'text', text: 't1 failed: boom' }], isError: true });
  assert.equal(deps.log.entries.at(-1), { level: 'warn', msg: 'tool failed', fields: { tool: 't1', request_id: 'req-1', error: 'boom' } });
  const s = fakeImpl(() => Promise.reject('plain string'));
  assert.equal(await executeGate(makeCall({ tool: boundTool({ impl: s }) }), deps, deps.redactText, deps.redactValue), { content: [{ type: 'text', text: 't1 failed: plain string' }], isError: true });
});

test('max_output_bytes: text capped across blocks on a UTF-8 boundary, with a note', async () => {
  const deps = makeDeps();
  const run = async (content: ToolResult['content'], max: number) =>
    executeGate(makeCall({ tool: boundTool({ impl: fakeImpl(async () => ({ content })) }), sandbox: { level: 'none', resource_limits: { max_output_bytes: max } } }), deps, deps.redactText, deps.redactValue);
  const note = (n: number) => ({ type: 'text' as const, text: `[output truncated at ${n} bytes by the sandbox's max_output_bytes]` });
  assert.equal(await run([{ type: 'text', text: 'abc€' }], 6), { content: [{ type: 'text', text: 'abc€' }] });
  assert.equal(await run([{ type: 'text', text: 'abc€' }], 5), { content: [{ type: 'text', text: 'abc' }, note(5)] });
  assert.equal(await run([{ type: 'text', text: 'a😀b' }], 4), { content: [{ type: 'text', text: 'a' }, note(4)] });
  assert.equal(await run([{ type: 'text', text: 'ab' }, { type: 'text', text: 'cdef' }], 4), { content: [{ type: 'text', text: 'ab' }, { type: 'text', text: 'cd' }, note(4)] });
  assert.equal(await run([{ type: 'text', text: 'abcdef' }], 0), { content: [{ type: 'text', text: 'abcdef' }] });
});

test('max_output_bytes: non-text blocks (image data, resource text) are not capped', async () => {
  const deps = makeDeps();
  const big = 'A'.repeat(10_000);
  const r = await executeGate(
    makeCall({ tool: boundTool({ impl: fakeImpl(async () => ({ content: [{ type: 'image', data: big, mimeType: 'image/png' }] })) }), sandbox: { level: 'none', resource_limits: { max_output_bytes: 100 } } }),
    deps,
    deps.redactText,
    deps.redactValue,
  );
  assert.ok(JSON.stringify(r).length < 1000, `result of ${JSON.stringify(r).length} chars under max_output_bytes 100`);
});

test('output secret scanning: redact, block (-32011), warn (logged, unchanged), scope input skipped', async () => {
  const out = `token ${GH_TOKEN} end`;
  const run = async (ss: any, deps = makeDeps()) =>
    settle(executeGate(makeCall({ tool: boundTool({ impl: fakeImpl(async () => ok(out)) }), policies: [policy('ss', { rules: [{ id: 'a', action: 'allow', scope: 'all' }], secret_scanning: ss })] }), deps, deps.redactText, deps.redactValue));
  assert.equal((await run({ enabled: true, scope: 'output', action: 'redact' })).value, ok('token [REDACTED:github-token] end'));
  assert.equal(wire((await run({ enabled: true, scope: 'both', action: 'block' })).error), {
    code: -32011,
    message: 'Policy denied: tool output contains secrets',
    data: { rule_id: 'secret_scanning', tool: 't1', action: 'deny', policy: 'ss' },
  });
  const w = makeDeps();
  assert.equal((await run({ enabled: true, scope: 'output', action: 'warn' }, w)).value, ok(out));
  assert.equal(w.log.entries, [{ level: 'warn', msg: 'secret in tool output', fields: { tool: 't1', policy: 'ss', request_id: 'req-1', kinds: ['github-token'] } }]);
  assert.equal((await run({ enabled: true, scope: 'input', action: 'block' })).value, ok(out));
  // the override policy scans too
  const deps = makeDeps();
  const r = await settle(
    executeGate(makeCall({ tool: boundTool({ impl: fakeImpl(async () => ok(out)) }), overridePolicy: policy('ov', { rules: [{ id: 'a', action: 'allow', scope: 'all' }], secret_scanning: { enabled: true, action: 'block' } }) }), deps, deps.redactText, deps.redactValue),
  );
  assert.is(wire(r.error).data.policy, 'ov');
});

test('output secret scanning: a block without `enabled` is on (secret-scan.ts: fail closed)', async () => {
  const deps = makeDeps();
  const r = await settle(
    executeGate(makeCall({ tool: boundTool({ impl: fakeImpl(async () => ok(`token ${GH_TOKEN}`)) }), policies: [policy('ss', { rules: [{ id: 'a', action: 'allow', scope: 'all' }], secret_scanning: { scope: 'output', action: 'block' } })] }), deps, deps.redactText, deps.redactValue),
  );
  assert.is(wire(r.error).code, -32011);
});

test('known secrets are always redacted from text output, whatever the policies say', async () => {
  const deps = makeDeps({ secrets: [SECRET] });
  const r = await executeGate(makeCall({ tool: boundTool({ impl: fakeImpl(async () => ({ content: [{ type: 'text', text: `v=${SECRET}` }, { type: 'text', text: JSON.stringify({ k: SECRET }) }] })) }) }), deps, deps.redactText, deps.redactValue);
  assert.equal(r, { content: [{ type: 'text', text: 'v=[REDACTED]' }, { type: 'text', text: '{"k":"[REDACTED]"}' }] });
  // also in the text of a failed tool
  const boom = fakeImpl(async () => {
    throw new Error(`bad key ${SECRET}`);
  });
  assert.equal(await executeGate(makeCall({ tool: boundTool({ impl: boom }) }), deps, deps.redactText, deps.redactValue), { content: [{ type: 'text', text: 't1 failed: bad key [REDACTED]' }], isError: true });
});

test('known secrets leak through a resource block (MCP embedded resource text)', async () => {
  const deps = makeDeps({ secrets: [SECRET] });
  const r = await executeGate(makeCall({ tool: boundTool({ impl: fakeImpl(async () => ({ content: [{ type: 'resource', resource: { uri: 'file:///x', text: `v=${SECRET}` } }] })) }) }), deps, deps.redactText, deps.redactValue);
  assert.not.ok(JSON.stringify(r).includes(SECRET), JSON.stringify(r));
});

test.run();
