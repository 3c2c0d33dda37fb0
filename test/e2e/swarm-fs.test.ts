// A three-process swarm on one machine over the filesystem bus: leader + two workers
// from examples/swarm, each a real `claw run`. Discover, delegate, report, broadcast, peer tasks
// through the worker's own gates, and workers SIGKILLed mid-task (retry → failover → dead letter).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { AGENTS, delegation, result, startSwarm, status, type Swarm } from './swarm-setup.ts';
import { connectFsClient } from '../../src/transports/fs/client-fs.ts';

let s: Swarm;

test.before(async () => {
  s = await startSwarm((dir) => `fs:${dir}/bus`);
});
test.after(async () => {
  await s?.close();
});

test('discover: both workers seen, ready, with canonical identity URIs; the leader is not its own peer', async () => {
  const peers = await s.waitPeers((p) => status(p, 'worker-a') === 'ready' && status(p, 'worker-b') === 'ready');
  assert.equal(
    [...peers].sort((a, b) => a.identity.localeCompare(b.identity)),
    [
      { identity: 'worker-a', uri: 'claw://local/identity/worker-a', status: 'ready' },
      { identity: 'worker-b', uri: 'claw://local/identity/worker-b', status: 'ready' },
    ],
  );
  const other = await s.procs.leader.request('claw.swarm.discover', { swarm: 'someone-else' });
  assert.equal(other.result, { peers: [] });
});

test('delegate → acknowledged; a worker runs the echo tool; its report is the task result', async () => {
  const d = delegation({ name: 'echo', arguments: { text: 'hello swarm' } });
  const t0 = Date.now();
  const ack = await s.procs.leader.request('claw.swarm.delegate', d);
  assert.is(ack.result.acknowledged, true);
  assert.is(ack.result.task_id, d.task_id);
  const worker = ack.result.peers[0];
  assert.ok(worker === 'worker-a' || worker === 'worker-b');
  const r = { result: await result(s.procs.leader, d.task_id, 8000) };
  const ms = Date.now() - t0;
  assert.is(r.result.state, 'completed', JSON.stringify(r.result));
  assert.equal(r.result.result.content, [{ type: 'text', text: 'hello swarm' }]);
  assert.equal(r.result.asked, [worker]);
  assert.is(r.result.reports[0].peer, worker);
  assert.is(r.result.reports[0].status, 'completed');
  console.log(`  fs swarm: delegate → report → result in ${ms} ms`);
  // The next task goes to the other worker (least loaded, then round-robin).
  const d2 = delegation({ name: 'echo', arguments: { text: 'second' } });
  const ack2 = await s.procs.leader.request('claw.swarm.delegate', d2);
  assert.is.not(ack2.result.peers[0], worker);
  const r2 = { result: await result(s.procs.leader, d2.task_id, 8000) };
  assert.equal(r2.result.result.content, [{ type: 'text', text: 'second' }]);
});

test("a peer's task passes the worker's own policy gate: shell denied there → task failed -32041 with -32011 inside", async () => {
  const d = delegation({ name: 'shell', arguments: { command: 'touch /tmp/should-not-exist' } });
  const ack = await s.procs.leader.request('claw.swarm.delegate', d);
  assert.is(ack.result.acknowledged, true);
  const r = { result: await result(s.procs.leader, d.task_id, 8000) };
  assert.is(r.result.state, 'failed');
  assert.is(r.result.error.code, -32041);
  const inner = r.result.error.data.failed[0].result.error;
  assert.is(inner.code, -32011);
  assert.is(inner.data.rule_id, 'deny-shell');
  assert.is(r.result.attempts, 1, 'a failed task is not retried');
});

test('broadcast (a notification) reaches every worker, who pass it to their operators', async () => {
  s.procs.leader.send({ jsonrpc: '2.0', method: 'claw.swarm.broadcast', params: { swarm: 'home-team', message: { type: 'context-update', data: 'New dataset available' } } });
  for (const w of ['worker-a', 'worker-b'] as const) {
    const n = await s.procs[w].waitFor((m) => m.method === 'claw.swarm.broadcast', 5000);
    assert.equal(n.params, { swarm: 'home-team', message: { type: 'context-update', data: 'New dataset available' }, from: 'leader' });
  }
  assert.not.ok(s.procs.leader.messages.some((m) => m.method === 'claw.swarm.broadcast'), 'the sender does not receive its own broadcast');
  // Sent as a request, the operator learns who got it.
  const r = await s.procs.leader.request('claw.swarm.broadcast', { swarm: 'home-team', message: 'ping' });
  assert.equal(r.result.delivered.sort(), ['worker-a', 'worker-b']);
});

// Issue 5: messages from peers are untrusted. A file written straight into a worker's peer inbox reaches the
// swarm methods only (docs/swarm.md "Methods"): the operator's table (claw.tool.call, claw.shutdown) is -32601
// there, nothing runs, and the worker stays up and ready.
test("a worker's peer inbox reaches the swarm methods only: claw.tool.call / claw.shutdown written there → -32601, nothing runs", async () => {
  const c = await connectFsClient(`fs:${s.dir}/bus/peers/worker-a?poll_interval_ms=20`, { baseDir: '/', sender: 'intruder' });
  try {
    const call = await c.request({ jsonrpc: '2.0', id: 1, method: 'claw.tool.call', params: { name: 'shell', arguments: { command: 'touch /tmp/claw-intruder' }, context: { request_id: 'intruder-1' } } }, { timeoutMs: 8000 });
    assert.is((call as any).error?.code, -32601, JSON.stringify(call));
    const stop = await c.request({ jsonrpc: '2.0', id: 2, method: 'claw.shutdown', params: {} }, { timeoutMs: 8000 });
    assert.is((stop as any).error?.code, -32601, JSON.stringify(stop));
  } finally {
    await c.close();
  }
  const st = await s.procs['worker-a'].request('claw.status', {});
  assert.is(st.result?.state, 'READY', JSON.stringify(st));
  assert.not.ok(s.procs['worker-a'].messages.some((m) => m.method === 'claw.tool.call'));
  const peers = await s.waitPeers((p) => status(p, 'worker-a') === 'ready');
  assert.is(status(peers, 'worker-a'), 'ready');
});

test('a worker SIGKILLed mid-task: retried (retry_per_agent 1), then the other worker completes it', async () => {
  const d = delegation({ name: 'slow', arguments: { seconds: '2' } });
  const ack = await s.procs.leader.request('claw.swarm.delegate', d);
  const victim = ack.result.peers[0] as 'worker-a' | 'worker-b';
  const survivor = victim === 'worker-a' ? 'worker-b' : 'worker-a';
  await new Promise((r) => setTimeout(r, 500));
  const t0 = Date.now();
  s.procs[victim].kill();
  const r = { result: await result(s.procs.leader, d.task_id, 15000) };
  assert.is(r.result.state, 'completed', JSON.stringify(r.result));
  assert.equal(r.result.asked, [victim, victim, survivor]);
  assert.is(r.result.reports[0].peer, survivor);
  console.log(`  fs swarm: kill → failover → completed in ${Date.now() - t0} ms (task itself 2000 ms)`);
  const peers = await s.waitPeers((p) => status(p, victim) === 'unavailable');
  assert.is(status(peers, survivor), 'ready');
});

test('the last worker killed mid-task: dead-letter queue, -32040; new delegations refused with -32040', async () => {
  const d = delegation({ name: 'slow', arguments: { seconds: '3' } });
  const ack = await s.procs.leader.request('claw.swarm.delegate', d);
  const last = ack.result.peers[0] as 'worker-a' | 'worker-b';
  await new Promise((r) => setTimeout(r, 400));
  s.procs[last].kill();
  const r = { result: await result(s.procs.leader, d.task_id, 15000) };
  assert.is(r.result.state, 'dead-letter', JSON.stringify(r.result));
  assert.is(r.result.error.code, -32040);
  assert.equal(r.result.asked, [last, last]);
  const dlq = await s.procs.leader.request('claw.swarm.result', {});
  assert.equal(dlq.result.dead_letter.map((x: any) => x.task_id), [d.task_id]);
  assert.equal(dlq.result.dead_letter[0].task, d.task, 'the dead letter keeps the task for a re-send');
  const refused = await s.procs.leader.request('claw.swarm.delegate', delegation({ name: 'echo', arguments: { text: 'x' } }));
  assert.is(refused.error.code, -32040);
  const peers = await s.discover();
  assert.equal(peers.map((p) => p.status), ['unavailable', 'unavailable']);
  // stdout carries protocol messages only, on every agent (peer traffic goes over the bus).
  for (const a of AGENTS) assert.equal(s.procs[a].garbage, [], `${a} stdout`);
});

test.run();
