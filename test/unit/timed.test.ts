// src/runtime/timed.ts: duration and outcome reported once, a synchronous answer kept synchronous.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { timed } from '../../src/runtime/timed.ts';
import { FakeClock } from './helpers/fakes.ts';

test('a synchronous value is returned as is (no promise) and reported once', () => {
  const clock = new FakeClock();
  const seen: unknown[] = [];
  const r = timed(clock, () => (clock.advance(2.5), 'v'), (ms, v, err) => seen.push([ms, v, err]));
  assert.is(r, 'v');
  assert.equal(seen, [[2.5, 'v', undefined]]);
});

test('a throw and a rejection are reported as failures and passed on; even `throw undefined` counts as one', async () => {
  const clock = new FakeClock();
  const seen: unknown[] = [];
  const boom = new Error('boom');
  assert.throws(() => timed(clock, () => { throw boom; }, (ms, v, err) => seen.push(err)), /boom/);
  try {
    timed(clock, () => { throw undefined; }, (ms, v, err) => seen.push(err instanceof Error));
    assert.unreachable();
  } catch (e) {
    assert.is(e, undefined);
  }
  const p = timed(clock, () => Promise.reject(boom), (ms, v, err) => seen.push(err));
  assert.instance(p, Promise);
  await (p as Promise<unknown>).catch(() => {});
  const ok = await timed(clock, async () => (clock.advance(1), 7), (ms, v) => seen.push([ms, v]));
  assert.is(ok, 7);
  assert.equal(seen, [boom, true, boom, [1, 7]]);
});

test.run();
