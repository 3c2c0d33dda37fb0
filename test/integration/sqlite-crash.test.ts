// Crash safety of the durable sql.js store: SIGKILL at random moments, torn journals, corrupt snapshots,
// a full disk. The invariant everywhere: every acknowledged write is there after reopening, and the store
// opens cleanly.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { openDurable, type DurableDatabase, type DurableFs } from '../../src/memory/sqlite/durable.ts';
import { ClawError } from '../../src/protocol/errors.ts';
import { crc32, crc32ForTest } from '../../src/memory/sqlite/crc32.ts';
import { corruptSnapshot } from '../helpers/corrupt-snapshot.ts';

const root = process.cwd();
const work = fs.mkdtempSync(join(tmpdir(), 'claw-sqlite-crash-'));
let n = 0;
const fresh = () => join(fs.mkdtempSync(join(work, `db${n++}-`)), 'memory.db');

const body = (i: number) => `entry ${i} `.padEnd(200, '.');
async function seed(path: string, rows: number, opts = {}): Promise<DurableDatabase> {
  const db = await openDurable(path, opts);
  db.exec('CREATE TABLE IF NOT EXISTS e(id INTEGER PRIMARY KEY, body TEXT)');
  const ins = db.prepare('INSERT INTO e VALUES (?, ?)');
  const start = Number(db.prepare('SELECT coalesce(max(id), 0) AS m FROM e').get()!.m);
  for (let i = start + 1; i <= start + rows; i++) ins.run(i, body(i));
  return db;
}
const ids = (db: DurableDatabase) => db.prepare('SELECT id FROM e ORDER BY id').all().map((r) => Number(r.id));
const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);
const integrity = (db: DurableDatabase) => db.prepare('PRAGMA integrity_check').get()!.integrity_check;

test('SIGKILL at 50 random moments: every acknowledged id survives, the store always reopens', async () => {
  // Compile the child the way scripts/test.mjs compiles tests: one ESM bundle, packages (sql.js) external,
  // written under the repo so node_modules resolves.
  const outdir = join(root, '.build', 'sqlite-crash', String(process.pid));
  const child = join(outdir, 'crash-writer.mjs');
  await build({
    entryPoints: [join(root, 'test/fixtures/sqlite/crash-writer.ts')],
    outfile: child,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node18',
    packages: 'external',
    logLevel: 'warning',
  });
  const path = fresh();
  const acked = new Set<number>();
  try {
    for (let round = 0; round < 50; round++) {
      const proc = spawn(process.execPath, [child, path, String(round + 1)], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      proc.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      proc.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
      const exited = new Promise<void>((res) => proc.on('close', () => res()));
      await new Promise<void>((res) => {
        // Killed at a random moment after the writer has acknowledged a few writes, so every round tests
        // something however slow a loaded machine makes the child.
        const acks = () => out.split('\n').filter((l) => /^\d+$/.test(l)).length;
        const wait = () => (out.includes('ready\n') && acks() >= 5 ? setTimeout(res, Math.random() * 120) : setTimeout(wait, 2));
        wait();
        proc.on('close', () => res());
      });
      proc.kill('SIGKILL');
      await exited;
      assert.not.match(err, /Error/, err);
      // Only complete lines count: a line cut by the kill was never fully reported.
      for (const line of out.slice(0, out.lastIndexOf('\n') + 1).split('\n')) if (/^\d+$/.test(line)) acked.add(Number(line));
      const db = await openDurable(path);
      const present = new Set(ids(db));
      const missing = [...acked].filter((id) => !present.has(id));
      assert.equal(missing, [], `round ${round}: acknowledged ids missing after SIGKILL`);
      assert.is(integrity(db), 'ok');
      db.close();
    }
  } finally {
    fs.rmSync(outdir, { recursive: true, force: true });
    try {
      fs.rmdirSync(join(root, '.build', 'sqlite-crash')); // only when no concurrent run still uses it
    } catch {
      // not empty
    }
  }
  assert.ok(acked.size >= 250, `only ${acked.size} writes acknowledged in 50 rounds`);
});

test('a torn last journal record is dropped, never half-applied, and the journal is cut back to it', async () => {
  const path = fresh();
  (await seed(path, 20)).close();
  const jpath = `${path}.claw-journal`;
  const full = fs.statSync(jpath).size;
  fs.truncateSync(jpath, full - 7);
  const warnings: ClawError[] = [];
  const db = await openDurable(path, { onWarning: (w) => warnings.push(w) });
  assert.equal(ids(db), range(1, 19));
  assert.ok(db.durable.recovery.journalBytesDropped > 0);
  assert.is(warnings[0]?.code, 'sqlite.journal_torn');
  assert.ok(warnings[0].message.includes(jpath));
  const cut = fs.statSync(jpath).size;
  assert.ok(cut < full - 7);
  db.prepare('INSERT INTO e VALUES (?, ?)').run(100, 'after');
  db.close();
  const again = await openDurable(path);
  assert.equal(ids(again), [...range(1, 19), 100]);
  assert.equal(again.durable.recovery.warnings, []);
  again.close();
});

test('garbage and zero-filled tails (a crash after the size grew) are dropped too', async () => {
  for (const tail of [new Uint8Array(300), Uint8Array.from({ length: 64 }, (_, i) => (i * 37) & 255)]) {
    const path = fresh();
    (await seed(path, 5)).close();
    fs.appendFileSync(`${path}.claw-journal`, tail);
    const db = await openDurable(path);
    assert.equal(ids(db), range(1, 5));
    assert.is(db.durable.recovery.journalBytesDropped, tail.length);
    db.close();
  }
});

test('a corrupt snapshot is reported by name and the previous snapshot (plus journals) restores everything', async () => {
  const path = fresh();
  const db = await seed(path, 10);
  db.durable.snapshot();
  db.prepare('INSERT INTO e VALUES (?, ?)').run(11, body(11));
  db.durable.snapshot();
  db.prepare('INSERT INTO e VALUES (?, ?)').run(12, body(12));
  db.close();
  corruptSnapshot(path);
  const warnings: ClawError[] = [];
  const re = await openDurable(path, { onWarning: (w) => warnings.push(w) });
  assert.is(re.durable.recovery.source, 'previous-snapshot');
  assert.is(warnings[0]?.code, 'sqlite.snapshot_corrupt');
  assert.ok(warnings[0].message.includes(path), warnings[0].message);
  assert.equal(ids(re), range(1, 12));
  assert.ok(fs.existsSync(`${path}.corrupt`));
  re.close();
  const clean = await openDurable(path);
  assert.equal(clean.durable.recovery.warnings, []);
  assert.equal(ids(clean), range(1, 12));
  clean.close();
});

test('a corrupt snapshot with no previous one is a clear error naming the file', async () => {
  const path = fresh();
  const db = await seed(path, 3);
  db.durable.snapshot();
  db.close();
  const whole = fs.readFileSync(path);
  fs.writeFileSync(path, whole.subarray(0, whole.length >> 1));
  try {
    await openDurable(path);
    assert.unreachable('should have thrown');
  } catch (e) {
    assert.instance(e, ClawError);
    assert.is((e as ClawError).code, 'sqlite.snapshot_corrupt');
    assert.ok((e as Error).message.includes(path), (e as Error).message);
  }
});

/** node:fs with a byte budget for writes: past it, a write stores what fits and throws ENOSPC. */
function fullDisk(budget: { left: number }): DurableFs {
  const real = fs as unknown as DurableFs;
  return {
    ...real,
    openSync: (p, f) => real.openSync(p, f),
    writeSync(fd, buf, off, len, pos) {
      if (len > budget.left) {
        const part = Math.max(0, budget.left);
        if (part > 0) real.writeSync(fd, buf, off, part, pos);
        budget.left = 0;
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      }
      budget.left -= len;
      return real.writeSync(fd, buf, off, len, pos);
    },
  };
}

test('a full disk surfaces ENOSPC to the writer, rolls the write back, and loses nothing acknowledged', async () => {
  const path = fresh();
  (await seed(path, 5)).close();
  const budget = { left: 2000 };
  const db = await openDurable(path, { fs: fullDisk(budget), minJournalBytes: 1 << 30 });
  const ins = db.prepare('INSERT INTO e VALUES (?, ?)');
  let i = 6;
  let failure: unknown;
  for (; i < 100; i++) {
    try {
      ins.run(i, body(i));
    } catch (e) {
      failure = e;
      break;
    }
  }
  assert.instance(failure, ClawError);
  assert.is((failure as ClawError).code, 'sqlite.journal_write');
  assert.is(((failure as ClawError).cause as NodeJS.ErrnoException).code, 'ENOSPC');
  assert.ok(!ids(db).includes(i), 'the failed write must not be visible');
  assert.throws(() => db.transaction(() => ins.run(i, 'again')), /ENOSPC/); // still full
  budget.left = 1 << 20; // space freed
  ins.run(1000, 'after space freed');
  db.close();
  const re = await openDurable(path);
  assert.equal(ids(re), [...range(1, i - 1), 1000]);
  assert.is(re.durable.recovery.journalBytesDropped, 0);
  re.close();
});

test('a full disk during a snapshot keeps the write acknowledged and warns; the journal carries on', async () => {
  const path = fresh();
  const budget = { left: 1 << 30 };
  const warnings: ClawError[] = [];
  const db = await seed(path, 5, { fs: fullDisk(budget), minJournalBytes: 1, snapshotRatio: 0, onWarning: (w: ClawError) => warnings.push(w) });
  await db.durable.settled(); // the seed's own automatic snapshot is written
  budget.left = 60; // enough for a journal record, not for a (compressed) snapshot
  db.prepare('INSERT INTO e VALUES (?, ?)').run(6, 'small');
  await db.durable.settled(); // the automatic snapshot is written once its image is compressed
  assert.is(warnings.at(-1)?.code, 'sqlite.snapshot_failed');
  assert.ok(!fs.existsSync(`${path}.tmp`));
  db.close();
  const re = await openDurable(path);
  assert.equal(ids(re), range(1, 6));
  re.close();
});

test('a failure at any step of a snapshot leaves files that reopen to every acknowledged write', async () => {
  for (let failAt = 0; failAt < 14; failAt++) {
    const path = fresh();
    const base = await seed(path, 8);
    base.durable.snapshot();
    base.prepare('INSERT INTO e VALUES (?, ?)').run(9, body(9));
    base.close();
    const ops = { n: 0, armed: false };
    const real = fs as unknown as DurableFs;
    const step = <A extends unknown[], R>(f: (...a: A) => R) => (...a: A): R => {
      if (ops.armed && ops.n++ === failAt) throw Object.assign(new Error(`EIO: injected at step ${failAt}`), { code: 'EIO' });
      return f(...a);
    };
    const faulty: DurableFs = {
      ...real,
      openSync: step(real.openSync),
      writeSync: step(real.writeSync),
      fsyncSync: step(real.fsyncSync),
      renameSync: step(real.renameSync),
      closeSync: real.closeSync,
    };
    const db = await openDurable(path, { fs: faulty, minJournalBytes: 1 << 30 });
    db.prepare('INSERT INTO e VALUES (?, ?)').run(10, body(10));
    ops.armed = true;
    try {
      db.durable.snapshot();
    } catch {
      // the "crash": abandon this handle and reopen from disk
    }
    ops.armed = false;
    db.close();
    const re = await openDurable(path);
    assert.equal(ids(re), range(1, 10), `failure at snapshot step ${failAt}`);
    assert.is(integrity(re), 'ok');
    re.close();
  }
});

test('a failure at any step of the very first snapshot (no .prev yet) reopens to every acknowledged write', async () => {
  // Found by the e2e crash test: killed after <file> was renamed into place but before the journal rotated, the
  // journal still continues the empty database; <file> already holds it (there is no .prev to compare with).
  for (let failAt = 0; failAt < 14; failAt++) {
    const path = fresh();
    const base = await seed(path, 8);
    base.close();
    const ops = { n: 0, armed: false };
    const real = fs as unknown as DurableFs;
    const step = <A extends unknown[], R>(f: (...a: A) => R) => (...a: A): R => {
      if (ops.armed && ops.n++ === failAt) throw Object.assign(new Error(`EIO: injected at step ${failAt}`), { code: 'EIO' });
      return f(...a);
    };
    const faulty: DurableFs = { ...real, openSync: step(real.openSync), writeSync: step(real.writeSync), fsyncSync: step(real.fsyncSync), renameSync: step(real.renameSync) };
    const db = await openDurable(path, { fs: faulty, minJournalBytes: 1 << 30 });
    db.prepare('INSERT INTO e VALUES (?, ?)').run(9, body(9));
    ops.armed = true;
    try {
      db.durable.snapshot();
    } catch {
      // the "crash"
    }
    ops.armed = false;
    db.close();
    const re = await openDurable(path);
    assert.equal(ids(re), range(1, 9), `failure at first-snapshot step ${failAt}`);
    assert.is(integrity(re), 'ok');
    re.close();
  }
});

test('the CRC-32 fallback (Node 18) computes what zlib.crc32 does, so files move between runtimes', () => {
  const data = Uint8Array.from({ length: 10_000 }, (_, i) => (i * 7919) & 255);
  assert.is(crc32ForTest(new TextEncoder().encode('123456789')), 0xcbf43926); // the standard check value
  assert.is(crc32ForTest(data), crc32(data));
  assert.is(crc32ForTest(data.subarray(5000), crc32ForTest(data.subarray(0, 5000))), crc32(data));
});

test.after(() => fs.rmSync(work, { recursive: true, force: true }));

test.run();
