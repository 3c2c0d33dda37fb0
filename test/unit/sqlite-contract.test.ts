// One contract, every SQLite adapter this runtime has: sql.js in memory and durable (always), node:sqlite or
// bun:sqlite (when the runtime provides one), and on Bun the journalled adapter held by bun:sqlite. Under Node < 22.5 the native half runs by re-executing this
// compiled file with the Node 22 from .build/runtimes (scripts/install-runtimes.sh), when that is installed.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '../../src/memory/sqlite/open.ts';
import { nativeAvailable } from '../../src/memory/sqlite/native.ts';
import type { OpenOptions, SqliteDatabase } from '../../src/memory/sqlite/types.ts';

const plain = (r: unknown) => (r === undefined ? r : { ...(r as object) });
const tmpDirs: string[] = [];
function tmpPath(): string {
  const d = mkdtempSync(join(tmpdir(), 'claw-sqlite-contract-'));
  tmpDirs.push(d);
  return join(d, 'memory.db');
}

interface Maker {
  name: string;
  fts: 'fts5' | 'fts4';
  /** The engine the adapter must report, where it says. */
  engine?: string;
  /** Options for a fresh database; file-backed makers return a path so the suite can reopen it. */
  options(): OpenOptions;
}

function contract(m: Maker): void {
  const it = (name: string, fn: () => Promise<void> | void) => test(`[${m.name}] ${name}`, fn);
  const open = () => openDatabase(m.options());

  it('reports its adapter and FTS capability', async () => {
    const db = await open();
    assert.is(db.adapter, m.name.startsWith('native') ? 'native' : 'sqljs');
    assert.is(db.capabilities.fts, m.fts);
    if (m.engine) assert.is(db.engine, m.engine);
    db.close();
  });

  it('run returns changes and lastInsertRowid; get and all read rows', async () => {
    const db = await open();
    db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
    const ins = db.prepare('INSERT INTO t(v) VALUES (?)');
    assert.equal({ ...ins.run('a') }, { changes: 1, lastInsertRowid: 1 });
    const r2 = ins.run('b');
    assert.is(Number(r2.lastInsertRowid), 2);
    assert.equal(plain(db.prepare('SELECT id, v FROM t WHERE id = ?').get(2)), { id: 2, v: 'b' });
    assert.is(db.prepare('SELECT id FROM t WHERE id = ?').get(99), undefined);
    assert.equal(db.prepare('SELECT v FROM t ORDER BY id').all().map(plain), [{ v: 'a' }, { v: 'b' }]);
    assert.equal(db.prepare('SELECT v FROM t WHERE id > 5').all(), []);
    assert.is(db.prepare("UPDATE t SET v = v || '!'").run().changes, 2);
    db.close();
  });

  it('binds named parameters with or without prefix, and numbered positional ones', async () => {
    const db = await open();
    db.exec('CREATE TABLE kv(k TEXT PRIMARY KEY, v TEXT)');
    db.prepare('INSERT INTO kv VALUES (:k, :v)').run({ k: 'a', v: '1' });
    db.prepare('INSERT INTO kv VALUES ($k, $v)').run({ $k: 'b', $v: '2' });
    db.prepare('INSERT INTO kv VALUES (@k, @v)').run({ k: 'c', v: '3' });
    db.prepare('INSERT INTO kv VALUES (?2, ?1)').run('4', 'd');
    const rows = db.prepare('SELECT k, v FROM kv ORDER BY k').all().map(plain);
    assert.equal(rows, [
      { k: 'a', v: '1' },
      { k: 'b', v: '2' },
      { k: 'c', v: '3' },
      { k: 'd', v: '4' },
    ]);
    assert.equal(plain(db.prepare('SELECT v FROM kv WHERE k = :k').get({ k: 'c' })), { v: '3' });
    db.close();
  });

  it('round-trips null, integers, floats, unicode text and blobs', async () => {
    const db = await open();
    db.exec('CREATE TABLE v(n, i INTEGER, f REAL, s TEXT, b BLOB)');
    db.prepare('INSERT INTO v VALUES (?, ?, ?, ?, ?)').run(null, 2 ** 40, 1.5, 'héllo 🦀', new Uint8Array([0, 1, 255]));
    const r = db.prepare('SELECT * FROM v').get()!;
    assert.is(r.n, null);
    assert.is(r.i, 2 ** 40);
    assert.is(r.f, 1.5);
    assert.is(r.s, 'héllo 🦀');
    assert.equal(Array.from(r.b as Uint8Array), [0, 1, 255]);
    db.close();
  });

  it('transaction commits, rolls back on throw, and nests as savepoints', async () => {
    const db = await open();
    db.exec('CREATE TABLE t(v TEXT)');
    const ins = db.prepare('INSERT INTO t VALUES (?)');
    assert.is(
      db.transaction(() => {
        ins.run('a');
        ins.run('b');
        return 42;
      }),
      42,
    );
    assert.throws(() =>
      db.transaction(() => {
        ins.run('lost');
        throw new Error('boom');
      }),
    );
    db.transaction(() => {
      ins.run('outer');
      try {
        db.transaction(() => {
          ins.run('inner-lost');
          throw new Error('inner');
        });
      } catch {
        // the inner savepoint rolled back; the outer goes on
      }
      db.transaction(() => ins.run('inner-kept'));
    });
    const vs = db.prepare('SELECT v FROM t ORDER BY rowid').all().map((r) => r.v);
    assert.equal(vs, ['a', 'b', 'outer', 'inner-kept']);
    db.close();
  });

  it('errors are Errors; a failed statement changes nothing', async () => {
    const db = await open();
    db.exec('CREATE TABLE u(k TEXT PRIMARY KEY)');
    assert.throws(() => db.prepare('SELEC nonsense'), (e: unknown) => e instanceof Error);
    db.prepare('INSERT INTO u VALUES (?)').run('x');
    assert.throws(() => db.prepare('INSERT INTO u VALUES (?)').run('x'), (e: unknown) => e instanceof Error && /UNIQUE/i.test(e.message));
    assert.is(db.prepare('SELECT count(*) AS n FROM u').get()!.n, 1);
    db.close();
  });

  it(`full text search with ${m.fts} (and the other engine is reported missing)`, async () => {
    const db = await open();
    db.exec(`CREATE VIRTUAL TABLE docs USING ${m.fts}(body)`);
    const ins = db.prepare('INSERT INTO docs(body) VALUES (?)');
    ins.run('the quick brown fox');
    ins.run('a lazy dog sleeps');
    ins.run('quick thinking');
    const hits = db.prepare('SELECT body FROM docs WHERE docs MATCH ? ORDER BY rowid').all('quick').map((r) => r.body);
    assert.equal(hits, ['the quick brown fox', 'quick thinking']);
    assert.equal(db.prepare('SELECT body FROM docs WHERE docs MATCH ?').all('quick fox').map((r) => r.body), ['the quick brown fox']);
    // sql.js has no FTS5; bun:sqlite has it but the journalled adapter reports FTS4 so that sql.js can replay.
    if (m.fts === 'fts4' && m.engine !== 'bun:sqlite') assert.throws(() => db.exec('CREATE VIRTUAL TABLE d5 USING fts5(body)'), /fts5/);
    db.close();
  });

  it('a file-backed database keeps its data across close and reopen', async () => {
    const opts = m.options();
    if (!opts.path || opts.path === ':memory:') return;
    const db = await openDatabase(opts);
    db.exec('CREATE TABLE t(v TEXT)');
    db.transaction(() => {
      for (let i = 0; i < 10; i++) db.prepare('INSERT INTO t VALUES (?)').run(`v${i}`);
    });
    db.close();
    const again = await openDatabase(opts);
    assert.is(again.adapter, db.adapter);
    assert.is(again.prepare('SELECT count(*) AS n FROM t').get()!.n, 10);
    again.close();
  });
}

const makers: Maker[] = [
  { name: 'sqljs:memory', fts: 'fts4', engine: 'sql.js', options: () => ({ adapter: 'sqljs' }) },
  { name: 'sqljs:durable', fts: 'fts4', engine: 'sql.js', options: () => ({ adapter: 'sqljs', path: tmpPath() }) },
];
const hasNative = await nativeAvailable();
const onBun = typeof (globalThis as { Bun?: unknown }).Bun !== 'undefined';
if (onBun) {
  // What the memory service opens on Bun: the journalled layout, held by bun:sqlite (FTS4 at most, as sql.js).
  makers.push({ name: 'journal:bun', fts: 'fts4', engine: 'bun:sqlite', options: () => ({ path: tmpPath(), autoPrefers: 'journal' }) });
}
if (hasNative) {
  makers.push({ name: 'native:memory', fts: 'fts5', options: () => ({ adapter: 'native' }) });
  // A fixed path per call would be reused by the reopen test; tmpPath() gives a fresh one each time.
  makers.push({ name: 'native:file', fts: 'fts5', options: () => ({ adapter: 'native', path: tmpPath() }) });
}
for (const m of makers) contract(m);

test('auto picks native when the runtime has it, else sql.js; a sql.js journal keeps a path on sql.js', async () => {
  const db = await openDatabase();
  assert.is(db.adapter, hasNative ? 'native' : 'sqljs');
  db.close();
  const path = tmpPath();
  const s = await openDatabase({ adapter: 'sqljs', path });
  s.close();
  const again = await openDatabase({ path });
  assert.is(again.adapter, 'sqljs');
  again.close();
});

test("autoPrefers 'journal' (the memory service): a new file goes to sql.js everywhere; :memory: and a file the native engine made stay native", async () => {
  const path = tmpPath();
  const db = await openDatabase({ path, autoPrefers: 'journal' });
  assert.is(db.adapter, 'sqljs');
  db.close();
  const again = await openDatabase({ path, autoPrefers: 'journal' });
  assert.is(again.adapter, 'sqljs');
  again.close();
  const mem = await openDatabase({ autoPrefers: 'journal' });
  assert.is(mem.adapter, hasNative ? 'native' : 'sqljs');
  mem.close();
  if (hasNative) {
    const nativePath = tmpPath();
    const n = await openDatabase({ path: nativePath, adapter: 'native' });
    n.exec('CREATE TABLE t(x)');
    n.close();
    const reopened = await openDatabase({ path: nativePath, autoPrefers: 'journal' });
    assert.is(reopened.adapter, 'native');
    reopened.close();
  }
});

// Node 20 has no node:sqlite: run this compiled file again under the Node 22 and the Bun that
// scripts/install-runtimes.sh puts in .build/runtimes (CI runs that script first), where the native adapter
// (node:sqlite, bun:sqlite) joins the suite. Skipped quietly when a runtime is not installed.
const runtimes = [
  { name: 'Node 22 (node:sqlite)', bin: '.build/runtimes/node22/node_modules/.bin/node', args: ['--no-warnings'] },
  { name: 'Bun (bun:sqlite)', bin: '.build/runtimes/bun/node_modules/.bin/bun', args: [] },
];
for (const rt of runtimes) {
  const bin = join(process.cwd(), rt.bin);
  if (hasNative || process.env.CLAW_SQLITE_NESTED || !existsSync(bin)) continue;
  test(`contract suite under ${rt.name}`, () => {
    const r = spawnSync(bin, [...rt.args, fileURLToPath(import.meta.url)], {
      env: { ...process.env, CLAW_SQLITE_NESTED: '1', NO_COLOR: '1', FORCE_COLOR: '0' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    const out = `${r.stdout}\n${r.stderr}`.replace(/\x1b\[[0-9;]*m/g, '');
    assert.is(r.status, 0, out);
    // The native makers must really have run there.
    assert.ok(/Passed:\s+(\d+)/.test(out) && Number(/Passed:\s+(\d+)/.exec(out)![1]) > makers.length * 8, out);
  });
}

test.after(() => {
  for (const d of tmpDirs) rmSync(d, { recursive: true, force: true });
});

test.run();
