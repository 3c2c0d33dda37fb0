// One frame may carry up to 1,000 memory calls (router MAX_BATCH), each a write fdatasync'ed before its reply
// (docs/memory.md "Storage"): ~5 ms each here, far more on an SD card. Run back to back in one event-loop turn
// they held every other frame, timer and signal for seconds (a batch of 1,000 stores: 4.5 s before claw.status
// was read). The calls of a store run one at a time (read-your-writes) with a turn of the event loop between.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { memoryHarness } from './helpers/memory-module.ts';

test('a burst of store calls lets the event loop run between them, and still answers in order', async () => {
  const h = await memoryHarness([{ name: 'context', type: 'conversation' }]);
  try {
    // Open the database first: the burst is about the calls, not the open.
    assert.ok((await h.call('claw.memory.store', { store: 'context', entries: [{ content: 'first' }], context: { request_id: 'r0' } })).result);
    const done: number[] = [];
    let tickAfter = -1;
    const tick = new Promise<void>((resolve) => setImmediate(() => resolve(void (tickAfter = done.length))));
    const calls = Array.from({ length: 50 }, (_, i) =>
      h.call('claw.memory.store', { store: 'context', entries: [{ content: `e${i}` }], context: { request_id: `r${i + 1}` } }).then((r) => {
        assert.ok(r.result, r.error?.message);
        done.push(i);
      }),
    );
    await Promise.all([tick, ...calls]);
    assert.ok(tickAfter >= 0 && tickAfter < 5, `the event loop first ran after ${tickAfter} of 50 writes`);
    assert.equal(done, [...done].sort((a, b) => a - b));
    const all = await h.call('claw.memory.query', { store: 'context', query: { type: 'time-range', time_range: {} } });
    assert.equal(all.result.entries.map((e: any) => e.content), ['first', ...Array.from({ length: 50 }, (_, i) => `e${i}`)]);
  } finally {
    await h.dispose();
  }
});

test.run();
