// Checkpoint stores (src/memory/stores/checkpoint.ts): max_snapshots per task, ttl, key / time-range queries,
// compaction applying both, summarize refused.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openDatabase } from '../../src/memory/sqlite/open.ts';
import { openMemoryStore, type StoreSpec } from '../../src/memory/stores/index.ts';

test('max_snapshots per task, ttl hides then purges, key newest first, compaction applies both', async () => {
  const db = await openDatabase({ adapter: 'sqljs' });
  let now = Date.parse('2026-03-01T00:00:00Z');
  let id = 0;
  const s = openMemoryStore({ name: 'plans', type: 'checkpoint', checkpoint: { max_snapshots: 2, ttl: '1h' } } as StoreSpec, {
    db,
    now: () => new Date(now).toISOString(),
    newId: () => `c${++id}`,
  });
  assert.is(s.kind, 'checkpoint');
  await s.store([{ key: 'task-a', content: 's1' }]);
  now += 10 * 60_000;
  await s.store([{ key: 'task-a', content: 's2' }, { key: 'task-b', content: 'b1' }]);
  now += 10 * 60_000;
  await s.store([{ key: 'task-a', content: 's3' }]); // s1 leaves: 2 snapshots per task
  assert.equal((await s.query({ type: 'key', key: 'task-a' })).entries.map((e) => [e.id, e.content]), [['c4', 's3'], ['c2', 's2']]);
  assert.equal((await s.query({ type: 'key', key: 'task-a', top_k: 1 })).entries.map((e) => e.content), ['s3']);
  assert.equal((await s.query({ type: 'time-range', time_range: {} })).entries.map((e) => e.content), ['s2', 'b1', 's3']);
  assert.is(s.count(), 3);
  now += 45 * 60_000; // s2 and b1 are now 55 min old, s3 35 min
  now += 10 * 60_000; // 65 / 45 min: s2 and b1 past the ttl, hidden before any purge
  assert.equal((await s.query({ type: 'key', key: 'task-b' })).entries, []);
  assert.equal((await s.query({ type: 'key', key: 'task-a' })).entries.map((e) => e.content), ['s3']);
  assert.is(s.count(), 3, 'not purged yet');
  assert.equal(await s.compact(), { entries_before: 3, entries_after: 1, strategy: 'truncate' });
  let err: any;
  await s.compact({ strategy: 'summarize' }).catch((e) => (err = e));
  assert.is(err.code, 'memory.unsupported_compaction');
  await s.store([{ content: 'no key' }]).catch((e) => (err = e));
  assert.is(err.code, 'memory.key_required');
  await s.query({ type: 'semantic', text: 'x' }).catch((e) => (err = e));
  assert.is(err.code, 'memory.unsupported_query');
  db.close();
});

test.run();
