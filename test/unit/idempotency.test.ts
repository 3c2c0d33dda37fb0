// DedupCache (src/kernel/idempotency.ts; docs/tools.md "Idempotency").
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DedupCache, DEFAULT_DEDUP_WINDOW_MS } from '../../src/kernel/idempotency.ts';
import { FakeClock, deferred } from './helpers/fakes.ts';
import { ProtocolError } from '../../src/protocol/errors.ts';

test('same id + fingerprint within the window → first outcome, no second execution', async () => {
  const clock = new FakeClock();
  const c = new DedupCache(clock);
  assert.is(DEFAULT_DEDUP_WINDOW_MS, 300_000);
  let runs = 0;
  const work = async () => ++runs;
  const r1 = c.run('id', 'fp', work) as any;
  assert.is(r1.reused, false);
  await r1.outcome; // the window counts from when the outcome settled
  clock.advance(299_999);
  const r2 = c.run('id', 'fp', work) as any;
  assert.is(r2.reused, true);
  assert.is(await r2.outcome, 1);
  assert.is(runs, 1);
  clock.advance(1); // window over: evicted, runs again
  const r3 = c.run('id', 'fp', work) as any;
  assert.is(r3.reused, false);
  assert.is(await r3.outcome, 2);
});

test('conflict: same id, other fingerprint', () => {
  const c = new DedupCache(new FakeClock());
  c.run('id', 'a', async () => 1);
  assert.equal(c.run('id', 'b', async () => 2), { conflict: true });
});

test('concurrent duplicates share one execution; failures are remembered', async () => {
  const c = new DedupCache(new FakeClock());
  const d = deferred<string>();
  let runs = 0;
  const work = () => (runs++, d.promise);
  const a = c.run('id', 'fp', work) as any;
  const b = c.run('id', 'fp', work) as any;
  assert.is(b.outcome, a.outcome);
  d.resolve('done');
  assert.equal(await Promise.all([a.outcome, b.outcome]), ['done', 'done']);
  assert.is(runs, 1);
  const err = new Error('denied');
  c.run('bad', 'fp', async () => {
    throw err;
  });
  const again = c.run('bad', 'fp', async () => 'ran') as any;
  assert.is(again.reused, true);
  try {
    await again.outcome;
    assert.unreachable();
  } catch (e) {
    assert.is(e, err);
  }
});

test('eviction: oldest first, by window and beyond 10,000 entries', async () => {
  const clock = new FakeClock();
  const c = new DedupCache(clock, 1000);
  await (c.run('old', 'fp', async () => 'old') as any).outcome;
  clock.advance(600);
  await (c.run('new', 'fp', async () => 'new') as any).outcome;
  clock.advance(400);
  assert.is((c.run('old', 'fp', async () => 'again') as any).reused, false);
  assert.is((c.run('new', 'fp', async () => 'x') as any).reused, true);
  const big = new DedupCache(new FakeClock());
  for (let i = 0; i < 10_002; i++) big.run(`k${i}`, 'fp', async () => i);
  await new Promise((r) => setTimeout(r, 0)); // let them settle: running calls are never evicted
  big.run('last', 'fp', async () => 0);
  assert.is((big.run('k0', 'fp', async () => -1) as any).reused, false, 'the oldest entry was evicted');
  assert.is((big.run('k10001', 'fp', async () => -1) as any).reused, true);
});

test('an entry still in flight (waiting for approval) is evicted when the window passes: a retry runs again', () => {
  const clock = new FakeClock();
  const c = new DedupCache(clock);
  let runs = 0;
  c.run('id', 'fp', () => (runs++, new Promise(() => {}))); // e.g. require-approval with timeout_seconds: 3600
  clock.advance(DEFAULT_DEDUP_WINDOW_MS + 1);
  c.run('id', 'fp', () => (runs++, new Promise(() => {})));
  assert.is(runs, 1, 'concurrent duplicates wait for the first (docs/tools.md)');
});

test('synchronous outcomes: the ring keeps settle order while it grows, and drops the oldest beyond 10,000', () => {
  const clock = new FakeClock();
  const c = new DedupCache(clock, 1000);
  for (let i = 0; i < 10_050; i++) {
    c.run(`s${i}`, 'fp', () => i);
    if (i === 99) clock.advance(10); // s0..s99 settled 10 ms before the rest
  }
  assert.is((c.run('s50', 'fp', () => -1) as any).outcome, 50, 'the 51st is still answered from the cache');
  assert.is((c.run('s49', 'fp', () => -1) as any).reused, false, 'the 50 oldest went when the ring was full');
  assert.is((c.run('s50', 'fp', () => -1) as any).reused, false, 'a new entry in a full ring pushes the oldest out');
  assert.is((c.run('s10049', 'fp', () => -1) as any).outcome, 10049);
  clock.advance(991); // s0..s99 are now 1001 ms old, the rest 991 ms
  assert.is((c.run('s99', 'fp', () => -1) as any).reused, false, 'past the window');
  assert.is((c.run('s100', 'fp', () => -1) as any).outcome, 100, 'still inside the window');
});

test('a remembered synchronous failure is thrown again; a settled promise is handed out again', async () => {
  const c = new DedupCache(new FakeClock());
  const err = new Error('no');
  assert.throws(() => c.run('t', 'fp', () => {
    throw err;
  }));
  try {
    c.run('t', 'fp', () => 'ran');
    assert.unreachable();
  } catch (e) {
    assert.is(e, err);
  }
  const first = c.run('p', 'fp', async () => 'v') as any;
  await first.outcome;
  const again = c.run('p', 'fp', async () => 'other') as any;
  assert.is(again.reused, true);
  assert.is(again.outcome, first.outcome, 'the same promise');
});

test('the fingerprint is made from its source only when a request id repeats', () => {
  let made = 0;
  const c = new DedupCache<{ name: string }>(new FakeClock(), 1000, undefined, (s) => (made++, s.name));
  for (let i = 0; i < 100; i++) c.run(`id${i}`, { name: 'a' }, () => i);
  assert.is(made, 0);
  assert.is((c.run('id7', { name: 'a' }, () => -1) as any).outcome, 7);
  assert.equal(c.run('id8', { name: 'b' }, () => -1), { conflict: true });
  assert.is(made, 4);
});

test('a refusal before any work (-32602, -32600) is not the request_id\'s result: the retry runs; a denial is kept', async () => {
  const c = new DedupCache(new FakeClock());
  let runs = 0;
  const refuse = () => {
    runs++;
    throw new ProtocolError(-32602, 'Invalid params: arguments do not match the schema');
  };
  assert.throws(() => c.run('r1', 'fp', refuse));
  const again = c.run('r1', 'fp', () => (runs++, 'ran')) as { outcome: string; reused: boolean };
  assert.equal([again.outcome, again.reused, runs], ['ran', false, 2]);
  const rejected = c.run('r2', 'fp', async () => {
    throw new ProtocolError(-32600, 'Invalid request: not accepted now', { state: 'STOPPING' });
  }) as { outcome: Promise<unknown> };
  await rejected.outcome.catch(() => {});
  assert.is((c.run('r2', 'fp', () => 'ran') as { reused: boolean }).reused, false);
  assert.throws(() => c.run('r3', 'fp', () => {
    throw new ProtocolError(-32011, 'Policy denied');
  }));
  assert.throws(() => c.run('r3', 'fp', () => 'ran'), /Policy denied/, 'a policy decision is a result: answered again');
});

test.run();
