// Memory retention (retention.max_age, checkpoint.ttl) across a wall-clock step (src/memory/stores/base.ts,
// src/kernel/wall-age.ts; docs/boards.md "Clock"): what a board stored at its 1970 boot is not deleted as
// 56 years old when NTP sets the clock minutes later.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openDatabase } from '../../src/memory/sqlite/open.ts';
import { openMemoryStore, type StoreSpec } from '../../src/memory/stores/index.ts';

const NOW = Date.parse('2026-12-07T08:00:00Z');

async function booted(spec: StoreSpec) {
  const db = await openDatabase({ adapter: 'sqljs' });
  const c = { wall: 60_000, mono: 1_000 };
  const s = openMemoryStore(spec, { db, now: () => new Date(c.wall).toISOString(), monotonic: () => c.mono });
  const tick = (ms: number) => void ((c.wall += ms), (c.mono += ms));
  return { s, c, tick, db };
}

test('conversation, retention.max_age 1h: turns stored before the step are kept, and still go an hour later', async () => {
  const { s, c, tick, db } = await booted({ name: 'chat', type: 'conversation', retention: { max_age: '1h' } } as StoreSpec);
  await s.store([{ content: 'at boot', metadata: { role: 'user' } }]);
  tick(5 * 60_000);
  c.wall = NOW; // NTP
  tick(60_000);
  await s.store([{ content: 'after the step', metadata: { role: 'user' } }]);
  assert.is(s.count(), 2, 'the turn stored 6 minutes ago is kept');
  tick(61 * 60_000);
  await s.store([{ content: 'an hour later', metadata: { role: 'user' } }]);
  assert.is(s.count(), 1, 'both older turns are past max_age now');
  db.close();
});

test('checkpoint ttl 1h: a checkpoint written before the step is still found after it', async () => {
  const { s, c, tick, db } = await booted({ name: 'plans', type: 'checkpoint', checkpoint: { ttl: '1h' } } as StoreSpec);
  await s.store([{ key: 'task', content: 'step 1 done' }]);
  tick(2 * 60_000);
  c.wall = NOW;
  tick(60_000);
  assert.equal((await s.query({ type: 'key', key: 'task' })).entries.map((e) => e.content), ['step 1 done']);
  db.close();
});

test.run();
