// ApprovalBroker (src/kernel/approvals.ts): wait / decide / timeout / abort / cancelAll.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ApprovalBroker } from '../../src/kernel/approvals.ts';
import { FakeClock, tick } from './helpers/fakes.ts';

test('decide, timeout, abort, unknown id', async () => {
  const clock = new FakeClock();
  const b = new ApprovalBroker(clock);
  const a = b.wait('a', 1000);
  const d = b.wait('d', 1000);
  assert.is(b.size, 2);
  assert.ok(b.decide('a', 'approved', 'ok'));
  assert.equal(await a, { kind: 'approved', reason: 'ok' });
  assert.is(b.decide('a', 'denied'), false);
  b.decide('d', 'denied');
  assert.equal(await d, { kind: 'denied', reason: undefined });
  const t = b.wait('t', 1000);
  clock.advance(1000);
  assert.equal(await t, { kind: 'timeout' });
  const ac = new AbortController();
  const c = b.wait('c', 1000, ac.signal);
  ac.abort();
  assert.equal(await c, { kind: 'cancelled' });
  const pre = new AbortController();
  pre.abort();
  assert.equal(await b.wait('p', 1000, pre.signal), { kind: 'cancelled' });
  assert.is(b.size, 0);
  assert.is(clock.pending, 0);
});

test('cancelAll releases every waiting call', async () => {
  const b = new ApprovalBroker(new FakeClock());
  const ps = ['x', 'y', 'z'].map((id) => b.wait(id, 1000));
  b.cancelAll();
  assert.equal(await Promise.all(ps), [{ kind: 'cancelled' }, { kind: 'cancelled' }, { kind: 'cancelled' }]);
});

test('a second wait on the same id orphans the first: it never settles, not even on cancelAll', async () => {
  // Reachable: DedupCache evicts an entry still waiting for approval once its window passed, so a
  // retry with the same request_id re-enters runGates and waits again under the same id.
  const b = new ApprovalBroker(new FakeClock());
  let first: unknown;
  b.wait('same', 600_000).then((o) => (first = o));
  const second = b.wait('same', 600_000);
  b.cancelAll();
  assert.equal(await second, { kind: 'cancelled' });
  await tick();
  assert.equal(first, { kind: 'cancelled' });
});

test.run();
