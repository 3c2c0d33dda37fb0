// Automatic snapshots compress the image on the libuv threadpool (durable.ts beginSnapshot): the journal restarts
// on the new snapshot's id at once, and <file> is written when the deflated body is ready. Until then the state
// on disk is <file> + <journal>.prev + <journal>. These tests kill (close) or fail the store at every point of
// that sequence and check that a reopen finds every acknowledged row, finishes the snapshot, and keeps the
// previous-snapshot fallback working.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDurable, type DurabilityOptions, type DurableDatabase, type DurableFs } from '../../src/memory/sqlite/durable.ts';
import { parseJournal, readSnapshot } from '../../src/memory/sqlite/format.ts';
import { corruptSnapshot } from '../helpers/corrupt-snapshot.ts';

const work = fs.mkdtempSync(join(tmpdir(), 'claw-sqlite-async-'));
let n = 0;
const fresh = () => join(fs.mkdtempSync(join(work, `db${n++}-`)), 'memory.db');
const body = (i: number) => `entry ${i} `.padEnd(200, '.');
const ids = (db: DurableDatabase) => db.prepare('SELECT id FROM e ORDER BY id').all().map((r) => Number(r.id));
const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);
const integrity = (db: DurableDatabase) => db.prepare('PRAGMA integrity_check').get()!.integrity_check;
const journalBase = (path: string) => parseJournal(fs.readFileSync(path), path).baseId;

/** A clock the test moves: an automatic snapshot happens at the first commit after `tick()` (max_age_ms 1). */
function clock() {
  let t = 1_000_000;
  return { now: () => t, tick: () => (t += 10) };
}

async function open(path: string, opts: DurabilityOptions): Promise<DurableDatabase> {
  const db = await openDurable(path, { minJournalBytes: 1 << 30, maxJournalBytes: 1 << 30, maxSnapshotAgeMs: 1, ...opts });
  db.exec('CREATE TABLE IF NOT EXISTS e(id INTEGER PRIMARY KEY, body TEXT)');
  await db.durable.settled();
  return db;
}
const insert = (db: DurableDatabase, from: number, to: number) => {
  const ins = db.prepare('INSERT INTO e VALUES (?, ?)');
  for (let i = from; i <= to; i++) ins.run(i, body(i));
};

/**
 * A database with rows 1..10 in a synchronous snapshot (`before`), then rows 11..`upTo` whose first insert starts an
 * automatic snapshot: the journal restarts at once on its id (`begun`) while the image compresses.
 */
async function compressing(path: string, upTo: number) {
  const c = clock();
  const db = await open(path, { now: c.now });
  insert(db, 1, 10);
  db.durable.snapshot();
  const before = readSnapshot(fs as unknown as DurableFs, path).id;
  c.tick();
  insert(db, 11, upTo); // the first of these triggers the snapshot
  return { db, before, begun: journalBase(`${path}.claw-journal`) };
}

test('writes made while the image compresses go to the new journal; the file appears when it is ready', async () => {
  const path = fresh();
  const { db, before, begun } = await compressing(path, 11);
  assert.is.not(begun, before);
  assert.is(journalBase(`${path}.claw-journal.prev`), before, 'the old journal continues the current <file>');
  insert(db, 12, 20); // while compressing
  await db.durable.settled();
  assert.is(readSnapshot(fs as unknown as DurableFs, path).id, begun, '<file> is the snapshot the journal continues');
  assert.is(readSnapshot(fs as unknown as DurableFs, `${path}.prev`).id, before);
  db.close();
  const re = await open(path, { maxSnapshotAgeMs: 0 });
  assert.equal(ids(re), range(1, 20));
  assert.is(re.durable.recovery.source, 'snapshot');
  re.close();
});

test('killed while compressing: the reopen replays <file> + .prev journal + journal and finishes that snapshot', async () => {
  let path = fresh();
  const { db, before, begun } = await compressing(path, 15);
  // The "kill": the files as they are now, before the compressed body is written, copied to open elsewhere.
  const killed = join(fs.mkdtempSync(join(work, 'killed-')), 'memory.db');
  for (const f of fs.readdirSync(join(path, '..'))) fs.copyFileSync(join(path, '..', f), join(killed, '..', f));
  assert.is(readSnapshot(fs as unknown as DurableFs, killed).id, before);
  // A close (a stop) does not leave that state: it writes the pending snapshot before closing.
  db.close();
  assert.is(readSnapshot(fs as unknown as DurableFs, path).id, begun);
  path = killed;
  const re = await open(path, { maxSnapshotAgeMs: 0 });
  assert.equal(ids(re), range(1, 15));
  assert.is(readSnapshot(fs as unknown as DurableFs, path).id, begun, 'the interrupted snapshot was written on open');
  assert.is(readSnapshot(fs as unknown as DurableFs, `${path}.prev`).id, before);
  insert(re, 16, 16);
  re.close();
  // The fallback chain is intact: with <file> corrupt, .prev + .prev journal + journal restore everything.
  corruptSnapshot(path);
  const fallback = await open(path, { maxSnapshotAgeMs: 0 });
  assert.is(fallback.durable.recovery.source, 'previous-snapshot');
  assert.equal(ids(fallback), range(1, 16));
  assert.is(integrity(fallback), 'ok');
  fallback.close();
});

for (const first of [false, true]) {
  test(`a failure at any fs step of an automatic snapshot${first ? ' (the very first one)' : ''} reopens to every acknowledged write`, async () => {
    for (let failAt = 0; failAt < 16; failAt++) {
      const path = fresh();
      const c = clock();
      const ops = { n: 0, armed: false };
      const real = fs as unknown as DurableFs;
      const step =
        <A extends unknown[], R>(f: (...a: A) => R) =>
        (...a: A): R => {
          if (ops.armed && ops.n++ === failAt) throw Object.assign(new Error(`EIO: injected at step ${failAt}`), { code: 'EIO' });
          return f(...a);
        };
      const faulty: DurableFs = { ...real, openSync: step(real.openSync), writeSync: step(real.writeSync), fsyncSync: step(real.fsyncSync), renameSync: step(real.renameSync) };
      // `first`: no snapshot exists yet (max_age only counts once there is one: the clock starts at open).
      const db = await open(path, { fs: faulty, now: c.now, ...(first ? { maxSnapshotAgeMs: 5 } : {}) });
      if (!first) {
        insert(db, 1, 5);
        db.durable.snapshot();
      }
      const acked: number[] = first ? [] : range(1, 5);
      c.tick();
      ops.armed = true;
      for (let i = 6; i <= 12; i++) {
        try {
          insert(db, i, i);
          acked.push(i);
        } catch {
          // refused (journal broken): not acknowledged
        }
        if (i === 8) await db.durable.settled();
      }
      await db.durable.settled();
      ops.armed = false;
      db.close();
      const re = await open(path, { maxSnapshotAgeMs: 0 });
      assert.equal(ids(re), acked, `failure at step ${failAt}`);
      assert.is(integrity(re), 'ok');
      insert(re, 100, 100);
      re.close();
      const again = await open(path, { maxSnapshotAgeMs: 0 });
      assert.equal(ids(again), [...acked, 100], `failure at step ${failAt}, second reopen`);
      again.close();
    }
  });
}

test.after(() => {
  fs.rmSync(work, { recursive: true, force: true });
});

test('a synchronous snapshot over a compressing one, killed before its journal rotates, reopens to every write', async () => {
  for (const pendingFails of [false, true]) {
    const path = fresh();
    const real = fs as unknown as DurableFs;
    let failTmpOpen = false;
    let failJournalRename = false;
    const faulty: DurableFs = {
      ...real,
      openSync: ((p: string, ...rest: unknown[]) => {
        if (failTmpOpen && p === `${path}.tmp`) {
          failTmpOpen = false;
          throw Object.assign(new Error('EIO: injected'), { code: 'EIO' });
        }
        return (real.openSync as (...a: unknown[]) => number)(p, ...rest);
      }) as DurableFs['openSync'],
      renameSync: (from: string, to: string) => {
        if (failJournalRename && from === `${path}.claw-journal` && to === `${path}.claw-journal.prev`) throw Object.assign(new Error('EIO: injected'), { code: 'EIO' });
        return real.renameSync(from, to);
      },
    };
    const c = clock();
    const db = await open(path, { fs: faulty, now: c.now });
    insert(db, 1, 10);
    db.durable.snapshot();
    c.tick();
    insert(db, 11, 12); // starts an automatic snapshot; it is still compressing
    // The "kill" comes right after the synchronous snapshot's <file> is in place, before its journal rotates.
    failTmpOpen = pendingFails;
    failJournalRename = true;
    assert.throws(() => db.durable.snapshot());
    const copy = join(fs.mkdtempSync(join(work, 'killed-')), 'memory.db');
    for (const f of fs.readdirSync(join(path, '..'))) fs.copyFileSync(join(path, '..', f), join(copy, '..', f));
    db.close();
    const re = await open(copy, { maxSnapshotAgeMs: 0 });
    assert.equal(ids(re), range(1, 12), `pending write ${pendingFails ? 'failed' : 'done'}`);
    assert.is(integrity(re), 'ok');
    re.close();
  }
});

test.run();
