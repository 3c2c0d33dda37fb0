// Issue 4 acceptance: "a claw.memory.store reply means the entries are durable (profile §8): append them to a
// journal and fsync before replying". A SIGKILL test cannot prove this (the page cache survives a killed
// process), so the file calls are recorded: every acknowledged write is a journal write followed by an
// fdatasync of that journal before the call returns, and a failing fdatasync (EIO) fails the write, which is
// rolled back and absent after reopening.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as nodeFs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDurable, type DurableFs } from '../../src/memory/sqlite/durable.ts';
import { ClawError } from '../../src/protocol/errors.ts';

const work = nodeFs.mkdtempSync(join(tmpdir(), 'claw-sqlite-fsync-'));
let n = 0;
const fresh = () => join(nodeFs.mkdtempSync(join(work, `db${n++}-`)), 'memory.db');

/** The real fs, recording write / fdatasync / fsync per fd (journal fds are known by their path). */
function recording(fail?: { fdatasync?: () => boolean }) {
  const real = nodeFs as unknown as DurableFs;
  const pathOf = new Map<number, string>();
  const ops: { op: string; path: string }[] = [];
  const fs: DurableFs = {
    ...real,
    openSync(p, flags) {
      const fd = real.openSync(p, flags);
      pathOf.set(fd, p);
      return fd;
    },
    writeSync(fd, buf, off, len, pos) {
      ops.push({ op: 'write', path: pathOf.get(fd) ?? '?' });
      return real.writeSync(fd, buf, off, len, pos);
    },
    fdatasyncSync(fd) {
      if (fail?.fdatasync?.()) throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
      ops.push({ op: 'fdatasync', path: pathOf.get(fd) ?? '?' });
      real.fdatasyncSync(fd);
    },
    fsyncSync(fd) {
      ops.push({ op: 'fsync', path: pathOf.get(fd) ?? '?' });
      real.fsyncSync(fd);
    },
  };
  return { fs, ops };
}

test('every acknowledged write: journal write(s), then fdatasync of the journal, before the call returns', async () => {
  const path = fresh();
  const r = recording();
  const db = await openDurable(path, { fs: r.fs, minJournalBytes: 1 << 30 });
  db.exec('CREATE TABLE e(id INTEGER PRIMARY KEY, body TEXT)');
  const ins = db.prepare('INSERT INTO e VALUES (?, ?)');
  const journal = db.durable.files.journal;
  for (let i = 1; i <= 20; i++) {
    const from = r.ops.length;
    if (i % 2 === 0) ins.run(i, `row ${i}`);
    else db.transaction(() => ins.run(i, `row ${i}`));
    const mine = r.ops.slice(from);
    const writes = mine.filter((o) => o.op === 'write');
    assert.ok(writes.length >= 1 && writes.every((o) => o.path === journal), `write ${i}: ${JSON.stringify(mine)}`);
    // The last call before returning is the journal's fdatasync: nothing written after it is acknowledged unsynced.
    assert.equal(mine[mine.length - 1], { op: 'fdatasync', path: journal }, `write ${i}: ${JSON.stringify(mine)}`);
  }
  // A read writes and syncs nothing.
  const from = r.ops.length;
  db.prepare('SELECT count(*) AS c FROM e').get();
  assert.equal(r.ops.slice(from), []);
  db.close();
});

test('fdatasync failing (EIO): the write throws, is rolled back, and is absent after reopening', async () => {
  const path = fresh();
  let failNext = false;
  const r = recording({ fdatasync: () => failNext && !(failNext = false) });
  const db = await openDurable(path, { fs: r.fs, minJournalBytes: 1 << 30 });
  db.exec('CREATE TABLE e(id INTEGER PRIMARY KEY, body TEXT)');
  const ins = db.prepare('INSERT INTO e VALUES (?, ?)');
  ins.run(1, 'acknowledged');
  failNext = true;
  let err: unknown;
  try {
    ins.run(2, 'never acknowledged');
  } catch (e) {
    err = e;
  }
  assert.instance(err, ClawError);
  assert.is(((err as ClawError).cause as NodeJS.ErrnoException).code, 'EIO');
  const rows = () => db.prepare('SELECT id FROM e ORDER BY id').all().map((x) => Number(x.id));
  assert.equal(rows(), [1], 'the failed write is not visible');
  ins.run(3, 'after the error');
  db.close();
  const re = await openDurable(path);
  assert.equal(re.prepare('SELECT id FROM e ORDER BY id').all().map((x) => Number(x.id)), [1, 3]);
  re.close();
});

test.after(() => {
  nodeFs.rmSync(work, { recursive: true, force: true });
});

test.run();
