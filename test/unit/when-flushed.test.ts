// src/node/when-flushed.ts: the exit waits for queued output, and only for that.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { whenFlushed } from '../../src/node/when-flushed.ts';

test('nothing opened, nothing queued, or a destroyed stream: at once', () => {
  let calls = 0;
  whenFlushed(() => [undefined, undefined], () => calls++);
  whenFlushed(() => [{ writableLength: 0, destroyed: false }], () => calls++);
  whenFlushed(() => [{ writableLength: 500, destroyed: true }], () => calls++);
  assert.is(calls, 3);
});

test('bytes queued: once, after the last stream has handed them on', async () => {
  const out = { writableLength: 1000, destroyed: false };
  const err = { writableLength: 10, destroyed: false };
  let calls = 0;
  whenFlushed(() => [out, err], () => calls++);
  assert.is(calls, 0);
  await new Promise((r) => setTimeout(r, 60));
  out.writableLength = 0;
  await new Promise((r) => setTimeout(r, 60));
  assert.is(calls, 0, 'stderr still holds bytes');
  err.destroyed = true; // its reader went away: nothing more will be written
  await new Promise((r) => setTimeout(r, 60));
  assert.is(calls, 1);
  await new Promise((r) => setTimeout(r, 60));
  assert.is(calls, 1);
});

test.run();
