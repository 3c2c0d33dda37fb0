// The peer side: a peer's messages are untrusted (spec §10), redelivery runs nothing twice
// (profile §5), and a task is this agent's own gated tool call (docs/swarm.md).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ProtocolError } from '../../src/protocol/errors.ts';
import { toolTaskRunner } from '../../src/swarm/tool-task.ts';
import { aggregate } from '../../src/swarm/aggregate.ts';
import { build, scripted, sleep, spec, stopAll, task } from './swarm-fixture.ts';

test.after.each(stopAll);

const s = spec({ topology: 'leader-worker', agents: [{ identity_ref: 'lead', role: 'leader' }, { identity_ref: 'w1', role: 'worker' }] });

async function codeOf(p: Promise<unknown>): Promise<number | undefined> {
  try {
    await p;
  } catch (e) {
    return (e as ProtocolError).code;
  }
}

test('a delegation from a non-member, or for another swarm, is refused (-32011) and nothing runs', async () => {
  const r = scripted(() => ({ status: 'completed', result: 1 }));
  const b = await build(s, r.make);
  const w1 = b.nodes.w1;
  assert.is(await codeOf(w1.fromPeer({ method: 'claw.swarm.delegate', params: { ...task(), from: 'mallory' } })), -32011);
  assert.is(await codeOf(w1.fromPeer({ method: 'claw.swarm.delegate', params: { ...task({}, 'other'), from: 'lead' } })), -32011);
  assert.is(await codeOf(w1.fromPeer({ method: 'claw.swarm.delegate', params: task() })), -32011, 'no sender at all');
  assert.is(await codeOf(w1.fromPeer({ method: 'claw.swarm.delegate', params: { task_id: 'x', from: 'lead' } })), -32602);
  assert.is(await codeOf(w1.fromPeer({ method: 'claw.tool.call', params: {} })), -32601, 'peers reach swarm methods only');
  await sleep(20);
  assert.is(r.stats.calls, 0);
  await b.stop();
});

test('redelivered delegation: acknowledged again, run once, report re-sent', async () => {
  const r = scripted(() => ({ status: 'completed', result: 7 }));
  const b = await build(s, r.make);
  const t = { ...task(), from: 'lead' };
  assert.equal(await b.nodes.w1.fromPeer({ method: 'claw.swarm.delegate', params: t }), { acknowledged: true });
  await sleep(30);
  assert.equal(await b.nodes.w1.fromPeer({ method: 'claw.swarm.delegate', params: t }), { acknowledged: true });
  await sleep(30);
  assert.is(r.stats.calls, 1);
  // Same task_id from the same sender under another request_id is a different task: refused.
  assert.is(await codeOf(b.nodes.w1.fromPeer({ method: 'claw.swarm.delegate', params: { ...t, context: { ...t.context, request_id: 'other' } } })), -32602);
  await b.stop();
});

test('a report nobody waits for is not recorded (acknowledged: false); a broadcast from a stranger is dropped', async () => {
  const b = await build(s, scripted(() => ({ status: 'completed', result: 1 })).make);
  assert.equal(await b.nodes.lead.fromPeer({ method: 'claw.swarm.report', params: { task_id: 'nope', status: 'completed', result: 1, from: 'w1' } }), { acknowledged: false });
  assert.is(await codeOf(b.nodes.lead.fromPeer({ method: 'claw.swarm.report', params: { task_id: 'nope', status: 'completed', result: 1 } })), -32602);
  await b.nodes.w1.fromPeer({ method: 'claw.swarm.broadcast', params: { swarm: 'team', message: 'hi', from: 'mallory' } });
  assert.equal(b.broadcasts.w1, []);
  await b.stop();
});

test('a report from another peer than the one asked is not recorded', async () => {
  const b = await build(s, (self) => ({ run: () => new Promise(() => {}) }), { ids: ['lead', 'w1'] });
  const t = task();
  b.nodes.lead.coordinator.delegate(t);
  await sleep(20);
  assert.equal(await b.nodes.lead.fromPeer({ method: 'claw.swarm.report', params: { task_id: t.task_id, status: 'completed', result: 'forged', from: 'lead' } }), { acknowledged: false });
  // The operator (trusted) may record it: TV-L3-02's report shape.
  assert.equal(b.nodes.lead.coordinator.report({ task_id: t.task_id, status: 'completed', result: { summary: 'ok' } }, undefined), { acknowledged: true });
  await b.nodes.lead.coordinator.tasks.wait(t.task_id, 1000);
  assert.equal(b.nodes.lead.coordinator.tasks.get(t.task_id)!.result, { summary: 'ok' });
  await b.stop();
});

test('tool task: runs claw.tool.call as this agent with the delegation request_id; errors become failed reports', async () => {
  const calls: any[] = [];
  let reply: () => unknown = () => ({ content: [{ type: 'text', text: 'hi' }] });
  const runner = toolTaskRunner(async (method, params) => {
    calls.push({ method, params });
    return reply();
  }, () => 'w1');
  const ctx = { task_id: 't', request_id: 'req-1', from: 'lead', signal: new AbortController().signal };
  const ok = await runner.run({ description: 'x', input: { tool: { name: 'echo', arguments: { text: 'hi' } }, identity: 'root' } }, ctx);
  assert.equal(ok, { status: 'completed', result: { content: [{ type: 'text', text: 'hi' }] } });
  assert.equal(calls[0], { method: 'claw.tool.call', params: { name: 'echo', arguments: { text: 'hi' }, context: { request_id: 'peer:lead:req-1', identity: 'w1' } } });
  reply = () => ({ content: [], isError: true });
  assert.is((await runner.run({ description: 'x', input: { tool: { name: 'echo' } } }, ctx)).status, 'failed');
  reply = () => {
    throw new ProtocolError(-32011, 'Policy denied: rule deny-shell');
  };
  assert.equal(await runner.run({ description: 'x', input: { tool: { name: 'shell', arguments: { command: 'rm -rf /' } } } }, ctx), {
    status: 'failed',
    result: { error: { code: -32011, message: 'Policy denied: rule deny-shell' } },
  });
  const none = await runner.run({ description: 'no tool named' }, ctx);
  assert.is(none.status, 'failed');
  assert.is((none.result as any).error.code, -32602);
  assert.is(calls.length, 3, 'a task without a tool runs nothing');
});

test('aggregate: merge of non-objects is the list; best-of-n ties go to the cheaper when cost_aware, else the faster', () => {
  const rep = (peer: string, result: unknown, extra: any = {}) => ({ peer, status: 'completed' as const, result, ...extra });
  assert.equal(aggregate('merge', [rep('a', 1), rep('b', { x: 1 })]), { ok: true, result: [1, { x: 1 }] });
  const tie = [rep('a', { score: 1 }, { token_usage: 50, duration_ms: 10 }), rep('b', { score: 1, b: 1 }, { token_usage: 10, duration_ms: 20 })];
  assert.equal(aggregate('best-of-n', tie, true), { ok: true, result: { score: 1, b: 1 } });
  assert.equal(aggregate('best-of-n', tie, false), { ok: true, result: { score: 1 } });
  assert.equal(aggregate('chain', [rep('a', 1), rep('b', 2)]), { ok: true, result: 2 });
  assert.is(aggregate('merge', []).ok, false);
});

test.run();
