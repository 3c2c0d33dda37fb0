// The journalled adapter held by bun:sqlite (src/memory/sqlite/bun-image.ts): sql.js's statement semantics, the
// journal's guarantees, and one data directory opened by either engine in turn. Under Node this file checks that
// the 'auto' engine falls back to sql.js, then re-runs itself under the Bun from .build/runtimes when installed.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '../../src/memory/sqlite/open.ts';
import { openDurable, type DurableDatabase, type DurableFs } from '../../src/memory/sqlite/durable.ts';
import type { SqliteDatabase } from '../../src/memory/sqlite/types.ts';

const onBun = typeof (globalThis as { Bun?: unknown }).Bun !== 'undefined';
const dirs: string[] = [];
const tmpPath = (): string => {
  const d = fs.mkdtempSync(join(tmpdir(), 'claw-bun-image-'));
  dirs.push(d);
  return join(d, 'memory.db');
};
/** What the memory service opens: 'auto', journalled. */
const openAuto = (path: string, durability = {}) => openDatabase({ path, autoPrefers: 'journal', durability });
const openSqlJs = (path: string) => openDatabase({ path, adapter: 'sqljs' });
const snapshot = (db: SqliteDatabase) => (db as DurableDatabase).durable.snapshot();
const count = (db: SqliteDatabase, table = 't') => Number(db.prepare(`SELECT count(*) AS n FROM ${table}`).get()!.n);

test("'auto' holds the journalled layout in bun:sqlite on Bun, in sql.js elsewhere; 'sqljs' by name is sql.js", async () => {
  const path = tmpPath();
  const db = await openAuto(path);
  assert.is(db.adapter, 'sqljs');
  assert.is(db.engine, onBun ? 'bun:sqlite' : 'sql.js');
  db.close();
  const named = await openSqlJs(path);
  assert.is(named.engine, 'sql.js');
  named.close();
  const direct = await openDurable(tmpPath(), {}, undefined, 'auto');
  assert.is(direct.engine, onBun ? 'bun:sqlite' : 'sql.js');
  direct.close();
});

if (onBun) {
  test('binds as sql.js does: missing positional values are NULL, a reset clears the bindings, named keys with any prefix', async () => {
    const db = await openAuto(tmpPath());
    db.exec('CREATE TABLE t(a, b, c)');
    db.prepare('INSERT INTO t VALUES (?, ?, ?)').run(1);
    db.prepare('INSERT INTO t VALUES (?, ?, ?)').run();
    db.prepare('INSERT INTO t VALUES (:a, $b, @c)').run({ a: 2, b: 'x' });
    assert.equal(db.prepare('SELECT a, b, c FROM t ORDER BY rowid').all().map((r) => ({ ...r })), [
      { a: 1, b: null, c: null },
      { a: null, b: null, c: null },
      { a: 2, b: 'x', c: null },
    ]);
    assert.throws(() => db.prepare('INSERT INTO t VALUES (?, ?, ?)').run(1, 2, 3, 4));
    assert.throws(() => db.prepare('SELEC 1'), /syntax/);
    db.close();
  });

  test('RETURNING, run() counts, streaming reads broken off and the statement reused', async () => {
    const db = await openAuto(tmpPath());
    db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)');
    const ret = db.prepare('INSERT INTO t(v) VALUES (?) RETURNING id').get('a');
    assert.equal({ ...ret }, { id: 1 });
    for (let i = 0; i < 20; i++) db.prepare('INSERT INTO t(v) VALUES (?)').run(`v${i}`);
    assert.equal({ ...db.prepare("UPDATE t SET v = v || '!' WHERE id > ?").run(10) }, { changes: 11, lastInsertRowid: 21 });
    const read = db.prepare('SELECT id FROM t WHERE id > ? ORDER BY id');
    let seen = 0;
    for (const row of read.iterate(0)) if (++seen === 3 || row.id === undefined) break;
    assert.is(seen, 3);
    assert.is(read.all(18).length, 3);
    // A write inside a transaction while a read statement was broken off: the commit goes through.
    db.transaction(() => db.prepare('DELETE FROM t WHERE id = ?').run(1));
    assert.is(count(db), 20);
    db.close();
  });

  test('a data directory moves between the engines both ways: journal replayed, snapshot read, FTS4 kept', async () => {
    const path = tmpPath();
    const js = await openSqlJs(path);
    js.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT, b BLOB); CREATE VIRTUAL TABLE f USING fts4(body)');
    js.transaction(() => {
      for (let i = 0; i < 500; i++) {
        js.prepare('INSERT INTO t(v, b) VALUES (?, ?)').run(`row ${i}`, new Uint8Array([i & 255, 0, 255]));
        js.prepare('INSERT INTO f(body) VALUES (?)').run(i % 10 === 0 ? `quick fox ${i}` : `slow dog ${i}`);
      }
    });
    snapshot(js);
    js.prepare('INSERT INTO t(v) VALUES (?)').run('after the snapshot, in the journal');
    js.close();

    // Each engine in turn sees everything the other acknowledged.
    const sees = (db: SqliteDatabase, engine: string, rows: number, quick: number) => {
      assert.is(db.engine, engine);
      assert.is(count(db), rows);
      assert.is(db.prepare('SELECT count(*) AS n FROM f WHERE f MATCH ?').get('quick')!.n, quick);
      assert.equal([...(db.prepare('SELECT b FROM t WHERE id = 2').get()!.b as Uint8Array)], [1, 0, 255]);
    };
    const bun = await openAuto(path);
    sees(bun, 'bun:sqlite', 501, 50);
    bun.prepare('INSERT INTO t(v) VALUES (?)').run('from bun, journal');
    snapshot(bun);
    bun.prepare('INSERT INTO f(body) VALUES (?)').run('quick brown from bun');
    bun.close();

    const back = await openSqlJs(path);
    sees(back, 'sql.js', 502, 51);
    assert.is(back.prepare('SELECT v FROM t ORDER BY id DESC LIMIT 1').get()!.v, 'from bun, journal');
    back.close();
  });

  test('a lone surrogate is stored as U+FFFD on bun:sqlite, live and after the replay on sql.js (one row, not two)', async () => {
    const path = tmpPath();
    const db = await openAuto(path);
    db.exec('CREATE TABLE k(v TEXT PRIMARY KEY)');
    db.prepare('INSERT INTO k VALUES (?)').run('a\uD800');
    assert.throws(() => db.prepare('INSERT INTO k VALUES (?)').run('a\uDBFF'), /UNIQUE/);
    assert.is(db.prepare('SELECT v FROM k').get()!.v, 'a\uFFFD');
    db.close();
    const js = await openSqlJs(path);
    assert.equal(js.prepare('SELECT v FROM k').all().map((r) => r.v), ['a\uFFFD']);
    js.close();
  });

  test('a torn journal tail is dropped and the acknowledged writes stay', async () => {
    const path = tmpPath();
    const db = await openAuto(path);
    db.exec('CREATE TABLE t(v TEXT)');
    for (let i = 0; i < 5; i++) db.prepare('INSERT INTO t VALUES (?)').run(`v${i}`);
    db.close();
    fs.appendFileSync(`${path}.claw-journal`, Buffer.from([40, 0, 0, 0, 1, 2, 3]));
    const again = (await openAuto(path)) as SqliteDatabase & { durable: { recovery: { journalBytesDropped: number } } };
    assert.is(again.engine, 'bun:sqlite');
    assert.is(again.durable.recovery.journalBytesDropped, 7);
    assert.is(count(again), 5);
    again.close();
  });

  test('a failed journal append rolls the write back in bun:sqlite and throws', async () => {
    let full = false;
    const failing: DurableFs = {
      ...(fs as unknown as DurableFs),
      writeSync: (fd, buf, off, len, pos) => {
        if (full) throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
        return fs.writeSync(fd, buf, off, len, pos);
      },
    };
    const path = tmpPath();
    const db = await openAuto(path, { fs: failing, minJournalBytes: 1 << 30 });
    db.exec('CREATE TABLE t(v TEXT UNIQUE)');
    db.prepare('INSERT INTO t VALUES (?)').run('kept');
    full = true;
    assert.throws(() => db.prepare('INSERT INTO t VALUES (?)').run('lost'), /ENOSPC|journal/);
    assert.throws(() => db.transaction(() => db.prepare('INSERT INTO t VALUES (?)').run('lost too')), /ENOSPC|journal/);
    full = false;
    assert.equal(db.prepare('SELECT v FROM t').all().map((r) => r.v), ['kept']);
    db.close();
    const again = await openAuto(path);
    assert.equal(again.prepare('SELECT v FROM t').all().map((r) => r.v), ['kept']);
    again.close();
  });

  test('10,000 rows with automatic snapshots reopen whole on either engine', async () => {
    const path = tmpPath();
    const db = (await openDatabase({ path, autoPrefers: 'journal', durability: { minJournalBytes: 64 << 10, snapshotRatio: 1 } })) as SqliteDatabase & {
      durable: { stats: { snapshots: number }; settled(): Promise<void> };
    };
    db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)');
    for (let batch = 0; batch < 100; batch++) {
      db.transaction(() => {
        for (let i = 0; i < 100; i++) db.prepare('INSERT INTO t(v) VALUES (?)').run(`entry ${batch}-${i} ${'x'.repeat(40)}`);
      });
      if (batch % 20 === 0) await db.durable.settled();
    }
    await db.durable.settled();
    assert.ok(db.durable.stats.snapshots > 1, `snapshots: ${db.durable.stats.snapshots}`);
    db.close();
    const bun = await openAuto(path);
    assert.is(count(bun), 10_000);
    bun.close();
    const js = await openSqlJs(path);
    assert.is(count(js), 10_000);
    js.close();
  });
}

// Node has no bun:sqlite: run this compiled file again under the Bun of scripts/install-runtimes.sh.
const bun = join(process.cwd(), '.build/runtimes/bun/node_modules/.bin/bun');
if (!onBun && !process.env.CLAW_SQLITE_NESTED && fs.existsSync(bun)) {
  test('the suite under Bun (bun:sqlite)', () => {
    const r = spawnSync(bun, [fileURLToPath(import.meta.url)], {
      env: { ...process.env, CLAW_SQLITE_NESTED: '1', NO_COLOR: '1', FORCE_COLOR: '0' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    const out = `${r.stdout}\n${r.stderr}`.replace(/\x1b\[[0-9;]*m/g, '');
    assert.is(r.status, 0, out);
    assert.ok(/Passed:\s+8\b/.test(out), out);
  });
}

test.after(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

test.run();
