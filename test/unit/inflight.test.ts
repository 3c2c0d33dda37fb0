import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { InflightTracker } from '../../src/kernel/inflight.ts';
import { deferred, tick } from './helpers/fakes.ts';

test('tokens increase in arrival order; size follows settlement (resolve and reject)', async () => {
  const t = new InflightTracker();
  const a = deferred();
  const b = deferred();
  const ta = t.track(a.promise);
  const tb = t.track(b.promise);
  assert.ok(tb > ta);
  assert.is(t.size, 2);
  a.resolve();
  await tick();
  assert.is(t.size, 1);
  b.reject(new Error('x'));
  await tick();
  assert.is(t.size, 0);
});

test('a rejected tracked promise causes no unhandled rejection', async () => {
  const t = new InflightTracker();
  let unhandled = 0;
  const on = () => unhandled++;
  process.on('unhandledRejection', on);
  const p = Promise.reject(new Error('tracked'));
  p.catch(() => {}); // the caller (router) handles its own promise; the tracker must not create a new unhandled one
  t.track(p);
  await tick(5);
  process.off('unhandledRejection', on);
  assert.is(unhandled, 0);
});

test('drain with nothing in flight: true at once', async () => {
  const t = new InflightTracker();
  const start = Date.now();
  assert.is(await t.drain(10_000), true);
  assert.ok(Date.now() - start < 50);
});

test('drain: true when the work finishes within the timeout', async () => {
  const t = new InflightTracker();
  const d = deferred();
  t.track(d.promise);
  setTimeout(() => d.resolve(), 20);
  const start = Date.now();
  assert.is(await t.drain(2_000), true);
  assert.ok(Date.now() - start < 1_000, 'resolves when the work settles, not at the timeout');
});

test('drain: a rejection counts as finished', async () => {
  const t = new InflightTracker();
  const d = deferred();
  t.track(d.promise);
  setTimeout(() => d.reject(new Error('failed')), 10);
  assert.is(await t.drain(2_000), true);
});

test('drain: false after ~timeoutMs when work is still running', async () => {
  const t = new InflightTracker();
  t.track(new Promise(() => {}));
  const start = Date.now();
  assert.is(await t.drain(60), false);
  const took = Date.now() - start;
  assert.ok(took >= 50 && took < 1_000, `took ${took} ms`);
});

test('drain(0) with pending work: false without waiting', async () => {
  const t = new InflightTracker();
  t.track(new Promise(() => {}));
  const start = Date.now();
  assert.is(await t.drain(0), false);
  assert.ok(Date.now() - start < 100);
});

test('drain: negative timeout acts like 0', async () => {
  const t = new InflightTracker();
  t.track(new Promise(() => {}));
  assert.is(await t.drain(-5), false);
});

test('before: only work registered before the token is waited for', async () => {
  const t = new InflightTracker();
  const early = deferred();
  t.track(early.promise);
  const shutdownToken = t.track(new Promise(() => {})); // the shutdown request itself never settles here
  t.track(new Promise(() => {})); // arrived after the shutdown
  setTimeout(() => early.resolve(), 10);
  const start = Date.now();
  assert.is(await t.drain(2_000, shutdownToken), true);
  assert.ok(Date.now() - start < 1_000);
});

test('before: work before the token still pending → false', async () => {
  const t = new InflightTracker();
  t.track(new Promise(() => {}));
  const token = t.track(Promise.resolve());
  assert.is(await t.drain(30, token), false);
});

test('before: the token itself is excluded; only later work → true at once', async () => {
  const t = new InflightTracker();
  const token = t.track(new Promise(() => {}));
  t.track(new Promise(() => {}));
  assert.is(await t.drain(5_000, token), true);
});

test.run();
