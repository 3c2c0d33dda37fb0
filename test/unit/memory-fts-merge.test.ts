// The sql.js full-text index (FTS4) is kept merged: a MATCH looks each term up in every index segment, and FTS4
// on its own lets 15 segments pile up per level (the full-text query goal; src/memory/stores/semantic.ts
// keepSegmentsMerged). These tests count the segments after many small write transactions, check the setting is
// written once (not on every open), that an index made by an older version gets it, and that ranking is unchanged.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/memory/sqlite/open.ts';
import type { SqliteDatabase } from '../../src/memory/sqlite/types.ts';
import { openMemoryStore } from '../../src/memory/stores/index.ts';
import { FTS4_AUTOMERGE } from '../../src/memory/stores/semantic.ts';

const fts = (store: string) => `claw_memory_fts_${Buffer.from(store, 'utf8').toString('hex')}`;
const segments = (db: SqliteDatabase, store: string) => Number(db.prepare(`SELECT count(*) AS n FROM ${fts(store)}_segdir`).get()!.n);
const automerge = (db: SqliteDatabase, store: string) => db.prepare(`SELECT value FROM ${fts(store)}_stat WHERE id = 2`).get()?.value;

let seed = 7;
const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
const WORDS = Array.from({ length: 400 }, (_, i) => `w${i.toString(36)}q`);
const doc = () => ({ content: Array.from({ length: 12 }, () => WORDS[Math.floor(rnd() ** 3 * WORDS.length)]).join(' ') });

/** 400 write transactions of 25 entries each. */
async function fill(db: SqliteDatabase, store: string, merged: boolean) {
  const s = openMemoryStore({ name: store, type: 'semantic', search: { strategy: 'fts-only' } }, { db });
  if (!merged) db.exec(`INSERT INTO ${fts(store)}(${fts(store)}) VALUES('automerge=0')`);
  for (let t = 0; t < 400; t++) await s.store(Array.from({ length: 25 }, doc));
  return s;
}

test('sql.js: the index stays at a handful of segments; without the setting the same writes leave many more', async () => {
  if ((await openDatabase({ adapter: 'sqljs' })).capabilities.fts !== 'fts4') return;
  const db = await openDatabase({ adapter: 'sqljs' });
  seed = 7;
  const merged = await fill(db, 'merged', true);
  seed = 7;
  const plain = await fill(db, 'plain', false);
  const m = segments(db, 'merged');
  const p = segments(db, 'plain');
  assert.ok(m <= 6, `merged index has ${m} segments`);
  assert.ok(p >= 15, `unmerged index has ${p} segments (the test would not show the difference)`);
  // Same documents, same ranking: ids differ by store, so compare contents and scores.
  for (const text of ['w1q w2q', 'w5q', 'wfq w0q w3q', `${WORDS[200]} ${WORDS[30]}`]) {
    const a = await merged.query({ type: 'semantic', text, top_k: 20 });
    const b = await plain.query({ type: 'semantic', text, top_k: 20 });
    assert.ok(a.entries.length > 0, text);
    assert.equal(
      a.entries.map((e) => [e.content, e.score]),
      b.entries.map((e) => [e.content, e.score]),
      text,
    );
  }
  db.close();
});

test('sql.js: the setting is written when the index is made or first opened by this version, not on every open', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-fts-merge-'));
  try {
    const path = join(dir, 'memory.db');
    let db = await openDatabase({ path, adapter: 'sqljs' });
    if (db.capabilities.fts !== 'fts4') return db.close();
    openMemoryStore({ name: 'notes', type: 'semantic' }, { db });
    assert.is(automerge(db, 'notes'), FTS4_AUTOMERGE);
    // An index as an older version left it: no automerge setting.
    db.exec(`INSERT INTO ${fts('notes')}(${fts('notes')}) VALUES('automerge=0')`);
    db.close();

    db = await openDatabase({ path, adapter: 'sqljs' });
    assert.is(automerge(db, 'notes'), 0);
    openMemoryStore({ name: 'notes', type: 'semantic' }, { db });
    assert.is(automerge(db, 'notes'), FTS4_AUTOMERGE, 'set on first open');
    db.close();

    db = await openDatabase({ path, adapter: 'sqljs' });
    const seen: string[] = [];
    const exec = db.exec.bind(db);
    db.exec = (sql: string) => (seen.push(sql), exec(sql));
    openMemoryStore({ name: 'notes', type: 'semantic' }, { db });
    assert.equal(seen.filter((s) => s.includes('automerge')), [], 'no second write of the setting');
    assert.is(automerge(db, 'notes'), FTS4_AUTOMERGE, 'survives the journal replay / snapshot');
    db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
