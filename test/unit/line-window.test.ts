// The log line budget shared by the MCP stderr and server-message logs (src/log/line-window.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { LineWindow } from '../../src/log/line-window.ts';

test('admits `limit` lines a window, counts the rest, and flags only the first refusal', () => {
  let t = 0;
  const w = new LineWindow(3, 1000, () => t);
  const verdicts = Array.from({ length: 6 }, () => [w.admit(), w.firstRefusedInWindow]);
  assert.equal(verdicts, [[true, false], [true, false], [true, false], [false, true], [false, false], [false, false]]);
  assert.is(w.takeRefused(), 3);
  assert.is(w.takeRefused(), 0, 'the count resets when taken');
  t = 999;
  assert.is(w.admit(), false, 'still the same window');
  t = 1000;
  let opened = 0;
  assert.is(w.admit(() => opened++), true, 'a new window admits again');
  assert.is(opened, 1, 'the caller hears of the new window before the line');
  assert.is(w.takeRefused(), 1);
});

test('a clock that steps back opens a window instead of refusing until it catches up', () => {
  let t = 10_000;
  const w = new LineWindow(1, 1000, () => t);
  assert.is(w.admit(), true);
  assert.is(w.admit(), false);
  t = 5_000;
  assert.is(w.admit(), true);
  assert.is(w.admit(), false);
});

test('the default clock is monotonic: a backward step of Date.now() changes nothing', async () => {
  const w = new LineWindow(1, 50);
  assert.is(w.admit(), true);
  assert.is(w.admit(), false);
  const realNow = Date.now;
  const stepped = realNow() - 3_600_000;
  Date.now = () => stepped;
  try {
    await new Promise((r) => setTimeout(r, 80));
    assert.is(w.admit(), true, 'a new window opened after windowMs on the monotonic clock');
  } finally {
    Date.now = realNow;
  }
});

test.run();
