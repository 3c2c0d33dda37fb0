// WallAges (src/kernel/wall-age.ts): the age of a stored wall stamp across wall-clock steps.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CLOCK_SET_FLOOR_MS, WallAges } from '../../src/kernel/wall-age.ts';

const MIN = 60_000;
const DAY = 86_400_000;
const NOW = Date.UTC(2026, 11, 7, 8, 0, 0);

function clock(wall: number) {
  const c = { wall, mono: 5_000, now: () => c.wall, monotonic: () => c.mono, tick: (ms: number) => void ((c.wall += ms), (c.mono += ms)) };
  return c;
}

test('no step: the age is now minus the stamp; a stamp in the future is fresh', () => {
  const c = clock(NOW);
  const w = new WallAges(c);
  c.tick(10 * MIN);
  const age = w.ages();
  assert.is(age(NOW), 10 * MIN);
  assert.is(age(NOW - DAY), DAY + 10 * MIN);
  assert.is(age(NOW + DAY), 0);
  assert.is(w.cutoff(5 * MIN), NOW + 5 * MIN);
});

test('booted at 1970, NTP steps 56 years forward: what was stamped before the step keeps its real age', () => {
  const c = clock(0);
  const w = new WallAges(c);
  c.tick(2 * MIN);
  const written = c.wall; // stamped at 1970 + 2 min
  c.tick(1 * MIN);
  w.ages(); // looked once before the step
  c.wall = NOW; // the step
  c.tick(5 * MIN);
  const age = w.ages();
  assert.ok(age(written) >= 6 * MIN && age(written) <= 6 * MIN + 1, String(age(written)));
  assert.is(age(NOW + 2 * MIN), 3 * MIN, 'stamped after the step: by the wall clock');
  // A threshold store keeps everything this process wrote less than an hour ago, before or after the step.
  assert.ok(w.cutoff(60 * MIN) <= 0);
});

test('an unset-clock stamp from before this process is as old as this process has run', () => {
  const c = clock(NOW);
  const w = new WallAges(c);
  c.tick(7 * MIN);
  assert.is(w.ages()(CLOCK_SET_FLOOR_MS - DAY * 365 * 50), 7 * MIN);
});

test('a step back of a year: a stamp from before it is not fresh for a year', () => {
  const c = clock(NOW);
  const w = new WallAges(c);
  c.tick(10 * MIN);
  const written = c.wall;
  c.tick(MIN);
  w.ages();
  c.wall -= 365 * DAY;
  c.tick(30 * MIN);
  const age = w.ages();
  assert.ok(age(written) >= 31 * MIN && age(written) <= 31 * MIN + 1, String(age(written)));
});

test('a slew (small changes of the offset) is not a step', () => {
  const c = clock(NOW);
  const w = new WallAges(c);
  for (let i = 0; i < 100; i++) {
    c.tick(MIN);
    c.wall += 100; // 100 ms per minute
    w.ages();
  }
  assert.is(w.ages()(NOW), 100 * MIN + 100 * 100);
});

test('a stamp a few ms outside the first look (the two clocks read apart) still keeps its real age across a step', () => {
  const c = clock(NOW);
  c.wall += 3; // the wall clock read 3 ms later than the monotonic one at the first look
  const w = new WallAges(c);
  const written = NOW + 1; // stamped right after, by a wall reading without the lag
  c.tick(100);
  c.wall += DAY; // NTP steps a day forward
  const age = w.ages();
  assert.ok(age(written) <= 1_000, String(age(written)));
});

test.run();
