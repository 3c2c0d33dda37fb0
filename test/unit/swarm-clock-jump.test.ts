// The swarm's windows (aggregation deadline, retry backoff, unavailable grace, circuit breaker) are
// monotonic: a board without an RTC jumps its wall clock when NTP first sets it (docs/boards.md "Clock").
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { build, jumpingClock, scripted, sleep, spec, stopAll, task } from './swarm-fixture.ts';

test.after.each(stopAll);

const YEAR = 365 * 86_400_000;

test('circuit breaker: a wall clock set back a year still half-opens it after reset_timeout_ms', async () => {
  const clock = jumpingClock();
  const s = spec({ topology: 'leader-worker', agents: [{ identity_ref: 'lead', role: 'leader' }, { identity_ref: 'w1', role: 'worker' }], failure: { circuit_breaker: { failure_threshold: 1, reset_timeout_ms: 100 } } });
  const b = await build(s, scripted(() => ({ status: 'failed', result: 'no' })).make, { clock });
  const t = task();
  b.nodes.lead.coordinator.delegate(t);
  await b.nodes.lead.coordinator.tasks.wait(t.task_id, 2000);
  assert.is(b.nodes.lead.coordinator.breakers.state('w1'), 'open');
  clock.jump(-YEAR);
  await sleep(150);
  assert.is(b.nodes.lead.coordinator.breakers.state('w1'), 'half-open');
  await b.stop();
});

test('circuit breaker: a wall clock set forward a year does not close it before reset_timeout_ms', async () => {
  const clock = jumpingClock();
  const s = spec({ topology: 'leader-worker', agents: [{ identity_ref: 'lead', role: 'leader' }, { identity_ref: 'w1', role: 'worker' }], failure: { circuit_breaker: { failure_threshold: 1, reset_timeout_ms: 60_000 } } });
  const b = await build(s, scripted(() => ({ status: 'failed', result: 'no' })).make, { clock });
  const t = task();
  b.nodes.lead.coordinator.delegate(t);
  await b.nodes.lead.coordinator.tasks.wait(t.task_id, 2000);
  clock.jump(YEAR);
  assert.is(b.nodes.lead.coordinator.breakers.state('w1'), 'open');
  await b.stop();
});

test('pipeline: a wall clock jumping forward a day during stage 1 does not time out stage 2', async () => {
  const clock = jumpingClock();
  const add = scripted((input) => ({ status: 'completed', result: { sum: (input.previous?.sum ?? input.start) + 1 } }), 50);
  const s = spec({
    topology: 'pipeline',
    aggregation: { strategy: 'chain', timeout_ms: 5000 },
    agents: [{ identity_ref: 'src', role: 'source' }, { identity_ref: 's1', role: 'stage' }, { identity_ref: 's2', role: 'stage' }],
  });
  const b = await build(s, add.make, { clock });
  const t = task({ start: 0 });
  b.nodes.src.coordinator.delegate(t);
  await sleep(20);
  clock.jump(86_400_000);
  await b.nodes.src.coordinator.tasks.wait(t.task_id, 3000);
  const rec = b.nodes.src.coordinator.tasks.get(t.task_id)!;
  assert.is(rec.state, 'completed', JSON.stringify(rec.error));
  assert.equal(rec.result, { sum: 2 });
  assert.ok((rec.reports[0] as any).duration_ms < 10_000, 'duration_ms is measured, not the jump');
  await b.stop();
});

test.run();
