// Failure handling of the swarm (spec §5.10 failure.*, aggregation.timeout_ms; profile §4 -32040 /
// -32041, §5 retries) over the in-memory bus.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ProtocolError } from '../../src/protocol/errors.ts';
import type { TaskRunner } from '../../src/swarm/peer.ts';
import { build, realClock, scripted, sleep, spec, stopAll, task } from './swarm-fixture.ts';

test.after.each(stopAll);

const agents = [
  { identity_ref: 'lead', role: 'leader' },
  { identity_ref: 'w1', role: 'worker' },
  { identity_ref: 'w2', role: 'worker' },
];
const lw = (failure: any, extra: any = {}) => spec({ topology: 'leader-worker', agents, failure, ...extra });

/** The listed peers hang (until stopped), w2 answers; records who ran what. */
function hangOn(hanging: string[]) {
  const ran: string[] = [];
  const make = (self: string): TaskRunner => ({
    async run(_task, ctx) {
      ran.push(self);
      // Hangs until the node stops (its signal), like a tool the session abort cancels.
      if (hanging.includes(self)) await new Promise((r) => ctx.signal.addEventListener('abort', r));
      return { status: 'completed', result: { by: self } };
    },
  });
  return { ran, make };
}

/** Delegate until `peer` is the one chosen (round-robin makes this at most a few tries). */
function delegateTo(b: Awaited<ReturnType<typeof build>>, peer: string) {
  for (let i = 0; i < 4; i++) {
    const t = task();
    if (b.nodes.lead.coordinator.delegate(t).peers[0] === peer) return t;
  }
  throw new Error(`never routed to ${peer}`);
}

test('worker killed mid-task: retried on it (retry_per_agent), then the other worker completes it', async () => {
  const r = hangOn(['w1']);
  const b = await build(lw({ retry_per_agent: 2 }), r.make);
  const t = delegateTo(b, 'w1');
  await sleep(30);
  b.hub.kill('w1');
  await b.nodes.lead.coordinator.tasks.wait(t.task_id, 3000);
  const rec = b.nodes.lead.coordinator.tasks.get(t.task_id)!;
  assert.is(rec.state, 'completed');
  assert.equal(rec.result, { by: 'w2' });
  // first try + 2 retries on w1 (unreachable once killed) + the failover to w2.
  assert.equal(rec.asked, ['w1', 'w1', 'w1', 'w2']);
  assert.is(rec.attempts, 4);
  assert.ok(b.log.some((l) => l.msg === 'swarm retry' && l.fields?.peer === 'w1' && l.fields?.attempt === 3));
  await b.stop();
});

test('a peer unavailable for less than unavailableGraceMs (a broker restart) is waited for; longer → retried', async () => {
  for (const [grace, attempts] of [
    [400, 1],
    [0, 2],
  ] as const) {
    const slow = scripted((_i, self) => ({ status: 'completed', result: self }), 250);
    const b = await build(spec({ topology: 'leader-worker', agents: agents.slice(0, 2), failure: { retry_per_agent: 1 } }), slow.make, { timing: { unavailableGraceMs: grace, retryInitialMs: 150, retryMaxMs: 150 } });
    const t = task();
    b.nodes.lead.coordinator.delegate(t);
    await sleep(40);
    const w1 = b.hub.connect('w1');
    await w1.announce({ identity: 'w1', swarm: 'team', role: 'worker', status: 'unavailable' });
    await sleep(100);
    await w1.announce({ identity: 'w1', swarm: 'team', role: 'worker', status: 'ready' });
    await b.nodes.lead.coordinator.tasks.wait(t.task_id, 3000);
    const rec = b.nodes.lead.coordinator.tasks.get(t.task_id)!;
    await b.stop();
    assert.is(rec.state, 'completed', `grace ${grace}: ${JSON.stringify(rec)}`);
    assert.is(rec.attempts, attempts, `grace ${grace}`);
  }
});

test('every worker gone: dead-letter queue (enabled), error -32040, max_retries caps the tries', async () => {
  const r = hangOn(['w1', 'w2']);
  const b = await build(lw({ retry_per_agent: 10, dead_letter: { enabled: true, max_retries: 2 } }), r.make);
  const t = task();
  b.nodes.lead.coordinator.delegate(t);
  await sleep(30);
  b.hub.kill('w1');
  b.hub.kill('w2');
  await b.nodes.lead.coordinator.tasks.wait(t.task_id, 3000);
  const rec = b.nodes.lead.coordinator.tasks.get(t.task_id)!;
  assert.is(rec.state, 'dead-letter');
  assert.is(rec.error!.code, -32040);
  assert.is(rec.attempts, 3, 'one try + max_retries (2) retries');
  assert.equal(b.nodes.lead.coordinator.tasks.deadLetters().map((x) => x.task_id), [t.task_id]);
  await b.stop();
});

test('dead letter disabled: the task fails with -32040 (peer unreachable)', async () => {
  const b = await build(lw({ retry_per_agent: 0 }), hangOn(['w1', 'w2']).make);
  const t = task();
  b.nodes.lead.coordinator.delegate(t);
  await sleep(30);
  b.hub.kill('w1');
  b.hub.kill('w2');
  await b.nodes.lead.coordinator.tasks.wait(t.task_id, 3000);
  const rec = b.nodes.lead.coordinator.tasks.get(t.task_id)!;
  assert.is(rec.state, 'failed');
  assert.is(rec.error!.code, -32040);
  assert.equal(b.nodes.lead.coordinator.tasks.deadLetters(), []);
  await b.stop();
});

test('a peer reporting failed → -32041, not retried (profile §4: not retryable)', async () => {
  const fail = scripted(() => ({ status: 'failed', result: { error: { code: -32011, message: 'Policy denied' } } }));
  const b = await build(lw({ retry_per_agent: 3 }), fail.make);
  const t = task();
  b.nodes.lead.coordinator.delegate(t);
  await b.nodes.lead.coordinator.tasks.wait(t.task_id, 2000);
  const rec = b.nodes.lead.coordinator.tasks.get(t.task_id)!;
  assert.is(rec.state, 'failed');
  assert.is(rec.error!.code, -32041);
  assert.equal((rec.error!.data as any).failed[0].result, { error: { code: -32011, message: 'Policy denied' } });
  assert.is(rec.attempts, 1);
  assert.is(fail.stats.calls, 1);
  await b.stop();
});

test('a deadline timer that fires before the monotonic clock reads the deadline is still the aggregation timeout', async () => {
  // libuv measures a timer from the loop time cached at the start of an iteration: under load it fires while
  // performance.now() still reads short of the deadline. A monotonic clock at half speed makes that certain.
  const t0 = performance.now();
  const slow = { ...realClock, monotonic: () => t0 + (performance.now() - t0) / 2 };
  const b = await build(lw({}, { aggregation: { strategy: 'merge', timeout_ms: 150 } }), hangOn(['w1', 'w2']).make, { clock: slow });
  const t = task();
  b.nodes.lead.coordinator.delegate(t);
  await b.nodes.lead.coordinator.tasks.wait(t.task_id, 2000);
  const rec = b.nodes.lead.coordinator.tasks.get(t.task_id)!;
  assert.is(rec.error!.code, -32040);
  const whys: string[] = (rec.error!.data as any).unreachable.map((u: any) => u.why);
  assert.ok(whys.length > 0 && whys.every((w) => w === 'aggregation timeout'), whys.join('; '));
  await b.stop();
});

test('aggregation.timeout_ms bounds the task: a silent worker → failed -32040 after the deadline', async () => {
  const b = await build(lw({}, { aggregation: { strategy: 'merge', timeout_ms: 150 } }), hangOn(['w1', 'w2']).make);
  const t = task();
  const t0 = Date.now();
  b.nodes.lead.coordinator.delegate(t);
  await b.nodes.lead.coordinator.tasks.wait(t.task_id, 2000);
  const took = Date.now() - t0;
  const rec = b.nodes.lead.coordinator.tasks.get(t.task_id)!;
  assert.is(rec.state, 'failed');
  assert.is(rec.error!.code, -32040);
  assert.equal((rec.error!.data as any).unreachable[0].why, 'aggregation timeout');
  assert.ok(took >= 140 && took < 600, `took ${took} ms`);
  await b.stop();
});

test('fan-out past the deadline: what reported is aggregated, the task is partial', async () => {
  const s = spec({
    topology: 'broadcast',
    aggregation: { strategy: 'merge', timeout_ms: 150 },
    agents: [{ identity_ref: 'src', role: 's' }, { identity_ref: 'p1', role: 'p' }, { identity_ref: 'p2', role: 'p' }],
  });
  const b = await build(s, (self) => (self === 'p2' ? hangOn(['p2']).make(self) : scripted(() => ({ status: 'completed', result: { p1: 1 } })).make(self)));
  const t = task();
  b.nodes.src.coordinator.delegate(t);
  await b.nodes.src.coordinator.tasks.wait(t.task_id, 2000);
  const rec = b.nodes.src.coordinator.tasks.get(t.task_id)!;
  assert.is(rec.state, 'partial');
  assert.equal(rec.result, { p1: 1 });
  await b.stop();
});

test('circuit breaker: opens after failure_threshold failures, skips the peer, half-opens after reset_timeout_ms', async () => {
  const s = spec({ topology: 'leader-worker', agents: agents.slice(0, 2), failure: { circuit_breaker: { failure_threshold: 2, reset_timeout_ms: 200 } } });
  let fail = true;
  const r = scripted(() => (fail ? { status: 'failed', result: 'no' } : { status: 'completed', result: 'yes' }));
  const b = await build(s, r.make);
  for (let i = 0; i < 2; i++) {
    const t = task();
    b.nodes.lead.coordinator.delegate(t);
    await b.nodes.lead.coordinator.tasks.wait(t.task_id, 2000);
  }
  assert.is(b.nodes.lead.coordinator.breakers.state('w1'), 'open');
  try {
    b.nodes.lead.coordinator.delegate(task());
    assert.unreachable();
  } catch (e) {
    assert.is((e as ProtocolError).code, -32040);
  }
  assert.is(r.stats.calls, 2, 'nothing sent while open');
  await sleep(220);
  assert.is(b.nodes.lead.coordinator.breakers.state('w1'), 'half-open');
  fail = false;
  const t = task();
  b.nodes.lead.coordinator.delegate(t);
  await b.nodes.lead.coordinator.tasks.wait(t.task_id, 2000);
  assert.is(b.nodes.lead.coordinator.tasks.get(t.task_id)!.state, 'completed');
  assert.is(b.nodes.lead.coordinator.breakers.state('w1'), 'closed');
  await b.stop();
});

test('the same delegation twice is acknowledged once and runs once; a reused task_id with another request_id is refused', async () => {
  const r = scripted(() => ({ status: 'completed', result: 1 }), 30);
  const b = await build(lw({}), r.make);
  const t = task();
  b.nodes.lead.coordinator.delegate(t);
  assert.is(b.nodes.lead.coordinator.delegate(t).acknowledged, true);
  try {
    b.nodes.lead.coordinator.delegate({ ...t, context: { ...t.context, request_id: 'other' } });
    assert.unreachable();
  } catch (e) {
    assert.is((e as ProtocolError).code, -32602);
  }
  await b.nodes.lead.coordinator.tasks.wait(t.task_id, 2000);
  assert.is(r.stats.calls, 1);
  await b.stop();
});

test('resource_limits.max_total_tokens: once the reports used it up, new delegations get -32021', async () => {
  const r = scripted(() => ({ status: 'completed', result: 1, token_usage: 600 }));
  const b = await build(spec({ topology: 'leader-worker', agents: agents.slice(0, 2), resource_limits: { max_total_tokens: 1000 } }), r.make);
  for (let i = 0; i < 2; i++) {
    const t = task();
    b.nodes.lead.coordinator.delegate(t);
    await b.nodes.lead.coordinator.tasks.wait(t.task_id, 2000);
    assert.is(b.nodes.lead.coordinator.tasks.get(t.task_id)!.reports[0].token_usage, 600);
  }
  assert.is(b.nodes.lead.coordinator.tokensUsed, 1200);
  try {
    b.nodes.lead.coordinator.delegate(task());
    assert.unreachable();
  } catch (e) {
    assert.is((e as ProtocolError).code, -32021);
    assert.equal((e as ProtocolError).data, { swarm: 'team', used: 1200, limit: 1000 });
  }
  assert.is(r.stats.calls, 2);
  await b.stop();
});

test.run();
