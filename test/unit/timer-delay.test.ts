// Durations from outside handed to Node timers (src/protocol/delay.ts): beyond 2^31 − 1 ms a timer would fire after
// 1 ms; clamped, the wait is as long as a timer can hold.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MAX_TIMER_MS, timerDelay } from '../../src/protocol/delay.ts';
import { InflightTracker } from '../../src/kernel/inflight.ts';

test('timerDelay clamps to [0, 2^31 − 1] and floors', () => {
  assert.is(MAX_TIMER_MS, 2147483647);
  assert.is(timerDelay(3_000_000_000), MAX_TIMER_MS);
  assert.is(timerDelay(1e300), MAX_TIMER_MS);
  assert.is(timerDelay(Infinity), MAX_TIMER_MS);
  assert.is(timerDelay(-5), 0);
  assert.is(timerDelay(NaN), 0);
  assert.is(timerDelay(12.7), 12);
});

test('a drain with a 3e9 ms timeout waits for the work (not 1 ms) and prints no TimeoutOverflowWarning', async () => {
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.name);
  process.on('warning', onWarning);
  try {
    const t = new InflightTracker();
    const token = t.begin();
    t.hold(token);
    setTimeout(() => t.end(token), 50);
    assert.is(await t.drain(3_000_000_000), true);
    await new Promise((r) => setImmediate(r));
    assert.equal(warnings, []);
  } finally {
    process.off('warning', onWarning);
  }
});

test.run();
