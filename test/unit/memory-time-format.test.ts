// Entry timestamps and time_range bounds are ISO 8601 (spec §9.3.4). Date.parse also takes other texts and reads
// a date-time without an offset, and most non-ISO texts ("1", "Jan 1 2026"), in the host's time zone: the same
// call stored or selected other instants on a board set to another zone. Those are -32602; ISO forms, with an
// offset when they have a time, are read the same everywhere.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { memoryHarness } from './helpers/memory-module.ts';

test('a time without an offset, or not ISO 8601, is -32602 (memory.invalid_time); ISO forms are taken', async () => {
  const h = await memoryHarness([{ name: 'context', type: 'conversation' }]);
  let n = 0;
  const store = (timestamp: string) => h.call('claw.memory.store', { store: 'context', entries: [{ content: 'x', timestamp }], context: { request_id: `r${++n}` } });
  const range = (from: string) => h.call('claw.memory.query', { store: 'context', query: { type: 'time-range', time_range: { from } } });
  try {
    for (const bad of ['2026-01-01T00:00:00', '1', 'Jan 1 2026', 'Thu, 01 Jan 2026 00:00:00', '2026-01-01T00:00']) {
      for (const r of [await store(bad), await range(bad)]) {
        assert.is(r.error?.code, -32602, `${JSON.stringify(bad)}: ${JSON.stringify(r.result)}`);
        assert.is((r.error!.data as any).reason, 'memory.invalid_time');
      }
    }
    for (const [good, iso] of [
      ['2026-01-01', '2026-01-01T00:00:00.000Z'],
      ['2026-01-01T10:00:00+05:30', '2026-01-01T04:30:00.000Z'],
      ['2026-01-01 10:00:00Z', '2026-01-01T10:00:00.000Z'],
      ['2026-01-01T10:00:00.1234Z', '2026-01-01T10:00:00.123Z'],
      ['+275760-09-13T00:00:00.000Z', '+275760-09-13T00:00:00.000Z'],
    ]) {
      assert.ok((await store(good)).result, good);
      assert.ok((await range(good)).result, good);
      const all = await h.call('claw.memory.query', { store: 'context', query: { type: 'time-range', time_range: {} } });
      assert.is(all.result.entries.at(-1).timestamp, iso);
    }
  } finally {
    await h.dispose();
  }
});

test.run();
