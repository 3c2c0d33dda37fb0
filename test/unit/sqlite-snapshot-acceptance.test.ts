// Issue 4 acceptance: sql.js snapshots are taken "only occasionally (size- and time-based, configurable)". The
// policy (durable.ts afterCommit, docs/memory.md `memory.snapshot`): after a commit, snapshot when the journal
// reaches max(min_journal_bytes, ratio × last snapshot size), or max_journal_bytes, or when the last snapshot is
// older than max_age_ms. Each threshold is checked here on its own, to the commit, and a snapshot restarts the
// journal; a reopen finds every row.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDurable, type DurabilityOptions, type DurableDatabase } from '../../src/memory/sqlite/durable.ts';

const work = fs.mkdtempSync(join(tmpdir(), 'claw-sqlite-snapshot-'));
let n = 0;
const fresh = () => join(fs.mkdtempSync(join(work, `db${n++}-`)), 'memory.db');
const body = (i: number) => `entry ${i} `.padEnd(200, '.');

async function open(path: string, opts: DurabilityOptions): Promise<DurableDatabase> {
  const db = await openDurable(path, opts);
  db.exec('CREATE TABLE IF NOT EXISTS e(id INTEGER PRIMARY KEY, body TEXT)');
  return db;
}

/**
 * Inserts rows one per commit until a snapshot happens (or `limit` rows). Returns the id that triggered it, the
 * journal size before that commit and the size of one row's record (all rows are the same size).
 */
function untilSnapshot(db: DurableDatabase, from: number, limit = 2000): { id: number; before: number; record: number } {
  const d = db.durable;
  const ins = db.prepare('INSERT INTO e VALUES (?, ?)');
  let record = 0;
  for (let i = from; i < from + limit; i++) {
    const before = d.stats.journalSize;
    const snaps = d.stats.snapshots;
    ins.run(i, body(i));
    if (d.stats.snapshots > snaps) return { id: i, before, record };
    record = d.stats.journalSize - before;
  }
  throw new Error(`no snapshot after ${limit} rows (journal ${d.stats.journalSize} bytes)`);
}

const count = (db: DurableDatabase) => Number(db.prepare('SELECT count(*) AS c FROM e').get()!.c);

test('size: the first snapshot comes at the commit that takes the journal to min_journal_bytes, then at ratio × the last snapshot', async () => {
  const path = fresh();
  const min = 16 * 1024;
  const db = await open(path, { minJournalBytes: min, snapshotRatio: 2, maxJournalBytes: 1 << 30 });
  const first = untilSnapshot(db, 1);
  assert.ok(first.before < min && first.before + first.record >= min, JSON.stringify(first));
  assert.is(db.durable.stats.snapshots, 1);
  assert.ok(db.durable.stats.journalSize < first.record, 'the journal restarted (header only)');
  // The image is compressed on the threadpool; the file is in place once that is done.
  await db.durable.settled();
  assert.ok(fs.existsSync(db.durable.files.snapshot));
  const image = db.durable.stats.lastSnapshotSize;
  assert.ok(image > 0);
  // Next threshold: max(min, 2 × image).
  const threshold = Math.max(min, 2 * image);
  const second = untilSnapshot(db, first.id + 1);
  assert.ok(second.before < threshold && second.before + second.record >= threshold, JSON.stringify({ second, threshold }));
  assert.is(db.durable.stats.snapshots, 2);
  const rows = count(db);
  db.close();
  const again = await open(path, {});
  assert.is(count(again), rows);
  assert.is(again.durable.recovery.source, 'snapshot');
  again.close();
});

test('max_journal_bytes forces a snapshot even when the ratio would wait much longer', async () => {
  const path = fresh();
  const max = 12 * 1024;
  const db = await open(path, { minJournalBytes: 0, snapshotRatio: 1e6, maxJournalBytes: max });
  db.durable.snapshot(); // a non-empty image, so ratio × image is far beyond max
  assert.ok(1e6 * db.durable.stats.lastSnapshotSize > 100 * max);
  const r = untilSnapshot(db, 1);
  assert.ok(r.before < max && r.before + r.record >= max, JSON.stringify(r));
  db.close();
});

test('max_age_ms: a journal with records snapshots once the last snapshot is that old; 0 never does', async () => {
  let now = 1_000_000;
  const path = fresh();
  const db = await open(path, { minJournalBytes: 1 << 30, maxJournalBytes: 1 << 30, maxSnapshotAgeMs: 60_000, now: () => now });
  const ins = db.prepare('INSERT INTO e VALUES (?, ?)');
  ins.run(1, body(1));
  now += 59_999;
  ins.run(2, body(2));
  assert.is(db.durable.stats.snapshots, 0, 'younger than max_age_ms: no snapshot');
  now += 1;
  ins.run(3, body(3));
  assert.is(db.durable.stats.snapshots, 1, 'as old as max_age_ms: the next commit snapshots');
  now += 30_000;
  ins.run(4, body(4));
  assert.is(db.durable.stats.snapshots, 1, 'the age counts from the last snapshot');
  db.close();

  let later = 0;
  const never = await open(fresh(), { minJournalBytes: 1 << 30, maxJournalBytes: 1 << 30, now: () => later });
  never.prepare('INSERT INTO e VALUES (?, ?)').run(1, body(1));
  later += 365 * 24 * 3600_000;
  never.prepare('INSERT INTO e VALUES (?, ?)').run(2, body(2));
  assert.is(never.durable.stats.snapshots, 0, 'max_age_ms unset (0): time alone never snapshots');
  never.close();
});

test.after(() => {
  fs.rmSync(work, { recursive: true, force: true });
});

test.run();
