import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RateLimiter, WINDOW_MS } from '../../src/policy/rate-limit.ts';

test('limit N: N calls pass, the next is refused', () => {
  const rl = new RateLimiter();
  const got = [0, 1, 2, 3].map((i) => rl.tryAcquire('p', 3, 1000 + i));
  assert.equal(got, [true, true, true, false]);
  assert.is(rl.count('p', 1003), 3, 'the refused call was not recorded');
});

test('window edges: a call stops counting exactly 60 s later', () => {
  const rl = new RateLimiter();
  assert.is(WINDOW_MS, 60_000);
  assert.ok(rl.tryAcquire('p', 1, 0));
  const table: [number, boolean][] = [
    [1, false],
    [59_999, false],
    [60_000, true], // the call at 0 left the window (now − 60000, now]
    [60_001, false], // the call at 60000 counts now
    [119_999, false],
    [120_000, true],
  ];
  for (const [now, ok] of table) assert.is(rl.tryAcquire('p', 1, now), ok, `t=${now}`);
});

test('sliding, not fixed: capacity returns call by call', () => {
  const rl = new RateLimiter();
  assert.ok(rl.tryAcquire('p', 2, 0));
  assert.ok(rl.tryAcquire('p', 2, 30_000));
  assert.not.ok(rl.tryAcquire('p', 2, 59_000));
  assert.ok(rl.tryAcquire('p', 2, 60_000)); // frees the 0 slot only
  assert.not.ok(rl.tryAcquire('p', 2, 60_500));
  assert.ok(rl.tryAcquire('p', 2, 90_000)); // frees the 30 000 slot
});

test('refused calls never extend the window', () => {
  const rl = new RateLimiter();
  assert.ok(rl.tryAcquire('p', 1, 0));
  for (let t = 1000; t < 60_000; t += 1000) assert.not.ok(rl.tryAcquire('p', 1, t));
  assert.ok(rl.tryAcquire('p', 1, 60_000));
});

test('limit 0 allows nothing and stores nothing', () => {
  const rl = new RateLimiter();
  assert.not.ok(rl.tryAcquire('p', 0, 0));
  assert.not.ok(rl.tryAcquire('p', 0, 10 * WINDOW_MS));
  assert.is(rl.size, 0);
  assert.not.ok(rl.tryAcquire('p', -1, 0));
  assert.not.ok(rl.tryAcquire('p', Number.NaN, 0));
});

test('per policy name', () => {
  const rl = new RateLimiter();
  assert.ok(rl.tryAcquire('a', 1, 0));
  assert.ok(rl.tryAcquire('b', 1, 0));
  assert.not.ok(rl.tryAcquire('a', 1, 1));
  rl.forget('a');
  assert.ok(rl.tryAcquire('a', 1, 2));
  assert.is(rl.size, 2);
});

test('bounded memory: at most `limit` live timestamps, expired ones pruned', () => {
  const rl = new RateLimiter();
  let allowed = 0;
  for (let t = 0; t < 10 * WINDOW_MS; t += 10) if (rl.tryAcquire('p', 100, t)) allowed++;
  assert.is(allowed, 1000); // 100 per 60 s over 600 s
  const w = (rl as unknown as { windows: Map<string, { times: number[]; head: number }> }).windows.get('p')!;
  assert.ok(w.times.length <= 200, `stored ${w.times.length}`);
  assert.ok(w.times.length - w.head <= 100);
});

test('a clock stepping back never allows more than the limit', () => {
  const rl = new RateLimiter();
  assert.ok(rl.tryAcquire('p', 2, 100_000));
  assert.ok(rl.tryAcquire('p', 2, 50_000));
  assert.not.ok(rl.tryAcquire('p', 2, 50_001));
});

test.run();
