// Topologies and aggregation end to end over the in-memory bus (spec §5.10, §9.3.3).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ProtocolError } from '../../src/protocol/errors.ts';
import { build, scripted, sleep, spec, stopAll, task } from './swarm-fixture.ts';

test.after.each(stopAll);

const echo = scripted((input, self) => ({ status: 'completed', result: { by: self, input } }));
const lw = spec({
  topology: 'leader-worker',
  agents: [
    { identity_ref: 'lead', role: 'leader' },
    { identity_ref: 'w1', role: 'worker' },
    { identity_ref: 'w2', role: 'worker' },
  ],
});

test('discover: peers actually seen, canonical URIs, ready; a killed peer reads unavailable', async () => {
  const b = await build(lw, echo.make, { ids: ['lead', 'w1', 'w2'] });
  const ids = (x: any) => x.peers.map((p: any) => p.identity).sort();
  assert.equal(ids(b.nodes.lead.discover()), ['w1', 'w2']);
  assert.equal(b.nodes.lead.discover('team').peers.find((p) => p.identity === 'w1'), { identity: 'w1', uri: 'claw://local/identity/w1', status: 'ready' });
  assert.equal(b.nodes.lead.discover('other-swarm').peers, []);
  b.hub.kill('w2');
  assert.is(b.nodes.lead.discover().peers.find((p) => p.identity === 'w2')!.status, 'unavailable');
  await b.stop();
});

test('discover: a peer never started is not listed (seen, not configured)', async () => {
  const b = await build(lw, echo.make, { ids: ['lead', 'w1'] });
  assert.equal(b.nodes.lead.discover().peers.map((p) => p.identity), ['w1']);
  await b.stop();
});

test('leader-worker: acknowledged, one worker runs it, its report is the result', async () => {
  const b = await build(lw, echo.make);
  const t = task({ n: 1 });
  const ack = b.nodes.lead.coordinator.delegate(t);
  assert.is(ack.acknowledged, true);
  assert.is(ack.peers.length, 1);
  assert.ok(['w1', 'w2'].includes(ack.peers[0]));
  await b.nodes.lead.coordinator.tasks.wait(t.task_id, 2000);
  const rec = b.nodes.lead.coordinator.tasks.get(t.task_id)!;
  assert.is(rec.state, 'completed');
  assert.equal(rec.result, { by: ack.peers[0], input: { n: 1 } });
  assert.is(rec.attempts, 1);
  assert.is(rec.reports[0].status, 'completed');
  assert.type(rec.reports[0].duration_ms, 'number');
  await b.stop();
});

test('leader-worker: tasks spread over both workers; a worker may not delegate', async () => {
  const b = await build(lw, echo.make);
  const a1 = b.nodes.lead.coordinator.delegate(task());
  const a2 = b.nodes.lead.coordinator.delegate(task());
  assert.not.equal(a1.peers[0], a2.peers[0]);
  try {
    b.nodes.w1.coordinator.delegate(task());
    assert.unreachable();
  } catch (e) {
    assert.instance(e, ProtocolError);
    assert.is((e as ProtocolError).code, -32602);
    assert.match((e as ProtocolError).message, 'only the leader delegates');
  }
  await b.stop();
});

test('delegate to another swarm name → -32602; no live peer → -32040 at once', async () => {
  const b = await build(lw, echo.make, { ids: ['lead'] });
  const codeOf = (fn: () => unknown) => {
    try {
      fn();
    } catch (e) {
      return (e as ProtocolError).code;
    }
  };
  assert.is(codeOf(() => b.nodes.lead.coordinator.delegate(task({}, 'elsewhere'))), -32602);
  assert.is(codeOf(() => b.nodes.lead.coordinator.delegate(task())), -32040);
  await b.stop();
});

test('peer-to-peer: any member delegates to another member', async () => {
  const s = spec({ topology: 'peer-to-peer', agents: [{ identity_ref: 'a', role: 'peer' }, { identity_ref: 'b', role: 'peer' }] });
  const b = await build(s, echo.make);
  const t = task({ x: 1 });
  assert.equal(b.nodes.b.coordinator.delegate(t).peers, ['a']);
  await b.nodes.b.coordinator.tasks.wait(t.task_id, 2000);
  assert.equal(b.nodes.b.coordinator.tasks.get(t.task_id)!.result, { by: 'a', input: { x: 1 } });
  await b.stop();
});

test('pipeline: stages after the delegator in manifest order, each given the previous result (chain)', async () => {
  const add = scripted((input, self) => ({ status: 'completed', result: { sum: (input.previous?.sum ?? input.start) + 1, last: self } }));
  const s = spec({
    topology: 'pipeline',
    aggregation: { strategy: 'chain', timeout_ms: 5000 },
    agents: [{ identity_ref: 'src', role: 'source' }, { identity_ref: 's1', role: 'stage' }, { identity_ref: 's2', role: 'stage' }, { identity_ref: 's3', role: 'stage' }],
  });
  const b = await build(s, add.make);
  const t = task({ start: 10 });
  assert.equal(b.nodes.src.coordinator.delegate(t).peers, ['s1', 's2', 's3']);
  await b.nodes.src.coordinator.tasks.wait(t.task_id, 2000);
  const rec = b.nodes.src.coordinator.tasks.get(t.task_id)!;
  assert.is(rec.state, 'completed');
  assert.equal(rec.result, { sum: 13, last: 's3' });
  assert.equal(rec.asked, ['s1', 's2', 's3']);
  assert.equal(rec.reports.map((r) => (r.result as any).sum), [11, 12, 13]);
  // s2 delegates only downstream.
  assert.equal(b.nodes.s2.coordinator.delegate(task({ start: 0 })).peers, ['s3']);
  await b.stop();
});

test('pipeline with a stage down → -32040 at once (a chain needs every stage)', async () => {
  const s = spec({ topology: 'pipeline', aggregation: { strategy: 'chain' }, agents: [{ identity_ref: 'src', role: 'x' }, { identity_ref: 's1', role: 'x' }, { identity_ref: 's2', role: 'x' }] });
  const b = await build(s, echo.make);
  b.hub.kill('s2');
  try {
    b.nodes.src.coordinator.delegate(task());
    assert.unreachable();
  } catch (e) {
    assert.is((e as ProtocolError).code, -32040);
    assert.equal(((e as ProtocolError).data as any).unavailable, ['s2']);
  }
  await b.stop();
});

const bcast = (strategy: any, n = 3, extra: any = {}) =>
  spec({
    topology: 'broadcast',
    aggregation: { strategy, timeout_ms: 3000, ...extra },
    agents: [{ identity_ref: 'src', role: 'source' }, ...Array.from({ length: n }, (_, i) => ({ identity_ref: `p${i + 1}`, role: 'peer' }))],
  });

test('broadcast + merge: every peer runs it; object results merged in manifest order', async () => {
  const r = scripted((_i, self) => ({ status: 'completed', result: { [self]: true, shared: self } }));
  const b = await build(bcast('merge'), r.make);
  const t = task();
  assert.equal(b.nodes.src.coordinator.delegate(t).peers.sort(), ['p1', 'p2', 'p3']);
  await b.nodes.src.coordinator.tasks.wait(t.task_id, 2000);
  const rec = b.nodes.src.coordinator.tasks.get(t.task_id)!;
  assert.is(rec.state, 'completed');
  assert.equal(rec.result, { p1: true, p2: true, p3: true, shared: 'p3' });
  assert.is(r.stats.calls, 3);
  await b.stop();
});

test('majority-vote: the answer of more than half wins; a split vote fails with -32041', async () => {
  const vote = scripted((_i, self) => ({ status: 'completed', result: { answer: self === 'p3' ? 'no' : 'yes' } }));
  const b = await build(bcast('majority-vote'), vote.make);
  const t = task();
  b.nodes.src.coordinator.delegate(t);
  await b.nodes.src.coordinator.tasks.wait(t.task_id, 2000);
  assert.equal(b.nodes.src.coordinator.tasks.get(t.task_id)!.result, { answer: 'yes' });
  await b.stop();

  const split = scripted((_i, self) => ({ status: 'completed', result: self }));
  const b2 = await build(bcast('majority-vote', 2), split.make);
  const t2 = task();
  b2.nodes.src.coordinator.delegate(t2);
  await b2.nodes.src.coordinator.tasks.wait(t2.task_id, 2000);
  const rec = b2.nodes.src.coordinator.tasks.get(t2.task_id)!;
  assert.is(rec.state, 'failed');
  assert.is(rec.error!.code, -32041);
  assert.match(rec.error!.message, 'no majority among 2 results');
  await b2.stop();
});

test('majority-vote fans out in a leader-worker swarm too (it needs several answers)', async () => {
  const s = spec({ ...lw, aggregation: { strategy: 'majority-vote', timeout_ms: 3000 } });
  const b = await build(s, scripted(() => ({ status: 'completed', result: 42 })).make);
  const t = task();
  assert.equal(b.nodes.lead.coordinator.delegate(t).peers.sort(), ['w1', 'w2']);
  await b.nodes.lead.coordinator.tasks.wait(t.task_id, 2000);
  assert.is(b.nodes.lead.coordinator.tasks.get(t.task_id)!.result, 42);
  await b.stop();
});

test('best-of-n: highest result.score wins', async () => {
  const scores: Record<string, number> = { p1: 0.2, p2: 0.9, p3: 0.5 };
  const b = await build(bcast('best-of-n'), scripted((_i, self) => ({ status: 'completed', result: { score: scores[self], by: self } })).make);
  const t = task();
  b.nodes.src.coordinator.delegate(t);
  await b.nodes.src.coordinator.tasks.wait(t.task_id, 2000);
  assert.equal(b.nodes.src.coordinator.tasks.get(t.task_id)!.result, { score: 0.9, by: 'p2' });
  await b.stop();
});

test('leader-decides: every report handed back uncombined', async () => {
  const b = await build(bcast('leader-decides', 2), scripted((_i, self) => ({ status: 'completed', result: self })).make);
  const t = task();
  b.nodes.src.coordinator.delegate(t);
  await b.nodes.src.coordinator.tasks.wait(t.task_id, 2000);
  const r = b.nodes.src.coordinator.tasks.get(t.task_id)!.result as any;
  assert.equal(r.reports.map((x: any) => x.result).sort(), ['p1', 'p2']);
  await b.stop();
});

test('hierarchical: a task goes one tier down (tiers = roles in order of first appearance)', async () => {
  const s = spec({
    topology: 'hierarchical',
    agents: [
      { identity_ref: 'root', role: 'root' },
      { identity_ref: 'sub1', role: 'supervisor' },
      { identity_ref: 'sub2', role: 'supervisor' },
      { identity_ref: 'leaf1', role: 'worker' },
    ],
  });
  const b = await build(s, echo.make);
  const first = b.nodes.root.coordinator.delegate(task()).peers[0];
  assert.ok(['sub1', 'sub2'].includes(first));
  assert.equal(b.nodes.sub1.coordinator.delegate(task()).peers, ['leaf1']);
  try {
    b.nodes.leaf1.coordinator.delegate(task());
    assert.unreachable();
  } catch (e) {
    assert.is((e as ProtocolError).code, -32040);
  }
  await b.stop();
});

test('hierarchical: a sub-leader passes the task down and reports its tier\'s result up; with its tier down it runs it', async () => {
  const s = spec({
    topology: 'hierarchical',
    agents: [
      { identity_ref: 'root', role: 'root' },
      { identity_ref: 'sub1', role: 'supervisor' },
      { identity_ref: 'leaf1', role: 'worker' },
    ],
  });
  const b = await build(s, echo.make);
  const t = task({ q: 1 });
  assert.equal(b.nodes.root.coordinator.delegate(t).peers, ['sub1']);
  await b.nodes.root.coordinator.tasks.wait(t.task_id, 3000);
  const rec = b.nodes.root.coordinator.tasks.get(t.task_id)!;
  assert.is(rec.state, 'completed');
  assert.equal(rec.result, { by: 'leaf1', input: { q: 1 } });
  assert.equal(b.nodes.sub1.coordinator.tasks.get(`${t.task_id}/sub1`)!.asked, ['leaf1']);
  b.hub.kill('leaf1');
  const t2 = task({ q: 2 });
  b.nodes.root.coordinator.delegate(t2);
  await b.nodes.root.coordinator.tasks.wait(t2.task_id, 3000);
  assert.equal(b.nodes.root.coordinator.tasks.get(t2.task_id)!.result, { by: 'sub1', input: { q: 2 } });
  await b.stop();
});

test('concurrency.max_parallel bounds delegations in flight across all peers', async () => {
  const slow = scripted(() => ({ status: 'completed', result: 1 }), 60);
  const s = bcast('merge', 4);
  s.coordination.concurrency.max_parallel = 2;
  const b = await build(s, slow.make);
  const t = task();
  b.nodes.src.coordinator.delegate(t);
  await b.nodes.src.coordinator.tasks.wait(t.task_id, 3000);
  assert.is(b.nodes.src.coordinator.tasks.get(t.task_id)!.state, 'completed');
  assert.is(slow.stats.calls, 4);
  assert.is(slow.stats.maxActive, 2);
  await b.stop();
});

test('sequential_within_agent: one task at a time per peer, whatever max_parallel allows', async () => {
  for (const [sequential, expected] of [
    [true, 1],
    [false, 3],
  ] as const) {
    const slow = scripted(() => ({ status: 'completed', result: 1 }), 50);
    const s = spec({ topology: 'leader-worker', agents: [{ identity_ref: 'lead', role: 'leader' }, { identity_ref: 'w1', role: 'worker' }] });
    s.coordination.concurrency.sequential_within_agent = sequential;
    const b = await build(s, slow.make);
    const ts = [task(), task(), task()];
    for (const t of ts) b.nodes.lead.coordinator.delegate(t);
    for (const t of ts) await b.nodes.lead.coordinator.tasks.wait(t.task_id, 3000);
    assert.equal(ts.map((t) => b.nodes.lead.coordinator.tasks.get(t.task_id)!.state), ['completed', 'completed', 'completed']);
    assert.is(slow.stats.maxActive, expected, `sequential_within_agent ${sequential}`);
    await b.stop();
  }
});

test('a peer at max_parallel announces busy; a ready peer is preferred', async () => {
  const slow = scripted(() => ({ status: 'completed', result: 1 }), 150);
  const s = spec({ ...lw });
  s.coordination.concurrency.max_parallel = 1;
  const b = await build(s, slow.make);
  const first = b.nodes.lead.coordinator.delegate(task()).peers[0];
  await sleep(30);
  assert.is(b.nodes.lead.discover().peers.find((p) => p.identity === first)!.status, 'busy');
  // max_parallel 1 on the leader too: the second waits its turn, but is addressed to the ready worker.
  const second = b.nodes.lead.coordinator.delegate(task()).peers[0];
  assert.is.not(second, first);
  await sleep(400);
  assert.is(b.nodes.lead.discover().peers.find((p) => p.identity === first)!.status, 'ready');
  await b.stop();
});

test('broadcast: reaches every live member; each passes it to its operator with the sender', async () => {
  const b = await build(lw, echo.make);
  const r = await b.nodes.lead.broadcast('team', { type: 'context-update', data: 'x' });
  assert.equal(r.delivered.sort(), ['w1', 'w2']);
  await sleep(20);
  assert.equal(b.broadcasts.w1, [{ swarm: 'team', message: { type: 'context-update', data: 'x' }, from: 'lead' }]);
  assert.equal(b.broadcasts.w2, [{ swarm: 'team', message: { type: 'context-update', data: 'x' }, from: 'lead' }]);
  assert.equal(b.broadcasts.lead, []);
  await b.stop();
});

test.run();
