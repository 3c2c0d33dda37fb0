// The fast full-text paths of the semantic store rank exactly as the plain ones did (BENCH.md "Memory",
// the full-text query goal): on a random corpus with many ties, every query's ids AND scores equal those of the
// reference — FTS4: every match's matchinfo('pcnalx') → bm25FromMatchinfo, all hits sorted, then cut; FTS5: the
// query joined with the entries table. Also the two helpers alone: matchinfoScorer (idf once per query) against
// bm25FromMatchinfo, and topK against sort + slice. Native half re-run under .build/runtimes Node 22 / Bun.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '../../src/memory/sqlite/open.ts';
import { nativeAvailable } from '../../src/memory/sqlite/native.ts';
import type { SqliteDatabase } from '../../src/memory/sqlite/types.ts';
import { openMemoryStore, type ClawMemoryStore } from '../../src/memory/stores/index.ts';
import { bm25FromMatchinfo, matchExpression, matchinfoScorer, normaliseBm25, topK } from '../../src/memory/stores/ranking.ts';

function rng(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
}

// 40 words, skewed draw, short documents, and every 7th document a copy of an earlier one: equal BM25 scores
// are common, so the tie-break (insertion order) is exercised on every query.
const WORDS = Array.from({ length: 40 }, (_, i) => `w${i.toString(36)}x`);
function corpus(n: number, rnd: () => number): string[] {
  const docs: string[] = [];
  for (let i = 0; i < n; i++) {
    if (i > 10 && i % 7 === 0) docs.push(docs[Math.floor(rnd() * docs.length)]);
    else docs.push(Array.from({ length: 1 + Math.floor(rnd() * 12) }, () => WORDS[Math.floor(rnd() ** 2 * WORDS.length)]).join(' '));
  }
  return docs;
}

const ftsName = (store: string) => `claw_memory_fts_${Buffer.from(store, 'utf8').toString('hex')}`;

/** The ranking as the store computed it before the fast paths: ids and normalised scores, best first. */
function reference(db: SqliteDatabase, store: string, text: string, limit: number): { id: string; score: number }[] {
  const fts = ftsName(store);
  const expr = matchExpression(text)!;
  const ids = new Map(db
      .prepare('SELECT seq, coalesce(id, seq) AS id FROM claw_memory_entries WHERE sid = (SELECT sid FROM claw_memory_stores WHERE name = ?)')
      .all(store)
      .map((r) => [Number(r.seq), String(r.id)]));
  const ranked =
    db.capabilities.fts === 'fts5'
      ? db
          .prepare(
            `SELECT ${fts}.rowid AS seq, -bm25(${fts}) AS x FROM ${fts} JOIN claw_memory_entries e ON e.seq = ${fts}.rowid
             WHERE ${fts} MATCH ? AND e.scope = ? ORDER BY x DESC, seq ASC LIMIT ?`,
          )
          .all(expr, '', limit)
          .map((r) => ({ seq: Number(r.seq), score: normaliseBm25(Number(r.x)) }))
      : db
          .prepare(`SELECT rowid AS seq, matchinfo(${fts}, 'pcnalx') AS mi FROM ${fts} WHERE ${fts} MATCH ?`)
          .all(expr)
          .map((r) => ({ seq: Number(r.seq), score: normaliseBm25(bm25FromMatchinfo(r.mi as Uint8Array)) }))
          .sort((a, b) => b.score - a.score || a.seq - b.seq)
          .slice(0, limit);
  return ranked.map((r) => ({ id: ids.get(r.seq)!, score: r.score }));
}

async function fill(adapter: 'sqljs' | 'native'): Promise<{ db: SqliteDatabase; store: ClawMemoryStore }> {
  const db = await openDatabase({ adapter });
  let n = 0;
  const store = openMemoryStore(
    { name: 'notes', type: 'semantic', search: { strategy: 'fts-only' } },
    { db, newId: () => `n${++n}`, now: () => '2026-01-01T00:00:00.000Z' },
  );
  const docs = corpus(1500, rng(7));
  for (let i = 0; i < docs.length; i += 100) await store.store(docs.slice(i, i + 100).map((content) => ({ content })));
  return { db, store };
}

function equivalence(adapter: 'sqljs' | 'native') {
  test(`${adapter}: 200 random queries rank exactly as the reference (ids and scores, ties by insertion order)`, async () => {
    const { db, store } = await fill(adapter);
    const rnd = rng(99);
    let compared = 0;
    let withTies = 0;
    for (let i = 0; i < 200; i++) {
      const text = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => WORDS[Math.floor(rnd() * WORDS.length)]).join(' ');
      const k = [1, 3, 10, 50, 2000][i % 5];
      const got = (await store.query({ type: 'semantic', text, top_k: k })).entries.map((e) => ({ id: e.id, score: e.score }));
      const want = reference(db, 'notes', text, k);
      assert.equal(got, want, `query "${text}" top_k ${k}`);
      compared += want.length;
      if (want.some((w, j) => j > 0 && w.score === want[j - 1].score)) withTies++;
    }
    // The corpus must really produce long result lists and ties, or the comparison proves little.
    assert.ok(compared > 10_000, `compared ${compared} ranked entries`);
    assert.ok(withTies > 50, `${withTies} queries with tied scores`);
    await store.close();
    db.close();
  });
}

/**
 * Deletes go through the FTS index by trigger (external-content FTS4 needs a BEFORE DELETE, the older
 * internal-content table and FTS5 an AFTER DELETE): after retention evicted the oldest 500 of 1,500 entries, every
 * query's contents and scores equal those of a store that only ever held the newest 1,000 — a missed or doubled
 * index delete changes the index's row count or term statistics and so the scores. `legacy` pre-creates the FTS4
 * table as versions before external content did.
 */
function deletes(adapter: 'sqljs' | 'native', legacy = false) {
  test(`${adapter}${legacy ? ' (legacy internal-content FTS4 table)' : ''}: after retention deletes, scores equal a store that never held the evicted entries`, async () => {
    const docs = corpus(1500, rng(11));
    const open = async (name: string, max?: number) => {
      const db = await openDatabase({ adapter });
      if (legacy) db.exec(`CREATE VIRTUAL TABLE ${ftsName(name)} USING fts4(content, tokenize=unicode61)`);
      let n = 0;
      const store = openMemoryStore(
        { name, type: 'semantic', search: { strategy: 'fts-only' }, ...(max ? { retention: { max_entries: max } } : {}) },
        { db, newId: () => `${name}${++n}`, now: () => '2026-01-01T00:00:00.000Z' },
      );
      return { db, store };
    };
    const a = await open('evicting', 1000);
    for (let i = 0; i < docs.length; i += 100) await a.store.store(docs.slice(i, i + 100).map((content) => ({ content })));
    const b = await open('fresh');
    for (let i = 500; i < docs.length; i += 100) await b.store.store(docs.slice(i, i + 100).map((content) => ({ content })));
    if (legacy) assert.not.match(String(a.db.prepare(`SELECT sql FROM sqlite_master WHERE name = ?`).get(ftsName('evicting'))?.sql), /content\s*=/);
    const rnd = rng(13);
    for (let i = 0; i < 100; i++) {
      const text = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => WORDS[Math.floor(rnd() * WORDS.length)]).join(' ');
      const view = async (s: ClawMemoryStore) => (await s.query({ type: 'semantic', text, top_k: 2000 })).entries.map((e) => [e.content, e.score]);
      assert.equal(await view(a.store), await view(b.store), `query "${text}"`);
    }
    for (const x of [a, b]) {
      await x.store.close();
      x.db.close();
    }
  });
}

test("matchinfoScorer ('pcnax' + lengths) equals bm25FromMatchinfo ('pcnalx') on random blobs, including n and hit counts changing between rows", () => {
  const rnd = rng(3);
  const score = matchinfoScorer();
  for (let row = 0; row < 5000; row++) {
    const p = 1 + Math.floor(rnd() * 4);
    const c = 1 + Math.floor(rnd() * 2);
    const n = row % 500 < 250 ? 1000 : 1000 + Math.floor(rnd() * 50);
    const u = new Uint32Array(3 + 2 * c + 3 * p * c);
    u[0] = p;
    u[1] = c;
    u[2] = n;
    for (let col = 0; col < c; col++) {
      u[3 + col] = 1 + Math.floor(rnd() * 30);
      u[3 + c + col] = Math.floor(rnd() * 60);
    }
    for (let k = 0; k < p * c; k++) {
      const base = 3 + 2 * c + 3 * k;
      u[base] = Math.floor(rnd() * 4);
      u[base + 1] = Math.floor(rnd() * 3000);
      u[base + 2] = row % 3 === 0 ? Math.floor(rnd() * n) : 17 * (k + 1);
    }
    const bytes = new Uint8Array(u.buffer);
    // The scorer reads 'pcnax' (no l[c]) and takes the lengths separately.
    const lengths = Array.from(u.subarray(3 + c, 3 + 2 * c));
    const pcnax = new Uint32Array([...u.subarray(0, 3 + c), ...u.subarray(3 + 2 * c)]);
    const noL = new Uint8Array(pcnax.buffer);
    assert.is(score(noL, lengths), bm25FromMatchinfo(bytes), `row ${row}`);
    // unaligned copy: the DataView path
    const off = new Uint8Array(noL.length + 1);
    off.set(noL, 1);
    assert.is(score(off.subarray(1), lengths), bm25FromMatchinfo(bytes), `row ${row} unaligned`);
  }
});

/**
 * The FTS4 path keeps document lengths in memory (semantic.ts docLengths): they must stay exact while entries
 * arrive after the first query, are evicted by retention, and are replaced by compaction digests (which reuse the
 * seq of their oldest entry). Every query in between equals the reference computed from matchinfo's own `l`.
 */
test('sqljs: document lengths stay exact across writes, evictions and summarize digests between queries', async () => {
  const db = await openDatabase({ adapter: 'sqljs' });
  let n = 0;
  const store = openMemoryStore(
    { name: 'notes', type: 'semantic', search: { strategy: 'fts-only' }, retention: { max_entries: 400 } },
    { db, newId: () => `n${++n}`, now: () => '2026-01-01T00:00:00.000Z' },
  );
  const rnd = rng(21);
  const docs = corpus(1200, rng(17));
  let compacted = 0;
  for (let round = 0; round < 24; round++) {
    await store.store(docs.slice(round * 50, round * 50 + 50).map((content) => ({ content })));
    if (round % 6 === 5) {
      const r = await store.compact({ strategy: 'summarize', keep: 100, digestSize: 4 });
      compacted += r.entries_before - r.entries_after;
    }
    for (let q = 0; q < 5; q++) {
      const text = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => WORDS[Math.floor(rnd() * WORDS.length)]).join(' ');
      const got = (await store.query({ type: 'semantic', text, top_k: 50 })).entries.map((e) => ({ id: e.id, score: e.score }));
      assert.equal(got, reference(db, 'notes', text, 50), `round ${round} query "${text}"`);
    }
  }
  assert.ok(compacted > 0, 'summarize replaced entries with digests');
  await store.close();
  db.close();
});

test('topK equals sort + slice for a total order, any limit', () => {
  const rnd = rng(5);
  const cmp = (a: { s: number; q: number }, b: { s: number; q: number }) => b.s - a.s || a.q - b.q;
  for (let t = 0; t < 300; t++) {
    const xs = Array.from({ length: Math.floor(rnd() * 200) }, (_, q) => ({ s: Math.floor(rnd() * 10) / 10, q }));
    for (const k of [0, 1, 2, 10, 199, 500]) assert.equal(topK(xs, k, cmp), [...xs].sort(cmp).slice(0, k));
  }
});

equivalence('sqljs');
deletes('sqljs');
deletes('sqljs', true);
const hasNative = await nativeAvailable();
if (hasNative) {
  equivalence('native');
  deletes('native');
}

const runtimes = [
  { name: 'Node 22 (node:sqlite)', bin: '.build/runtimes/node22/node_modules/.bin/node', args: ['--no-warnings'] },
  { name: 'Bun (bun:sqlite)', bin: '.build/runtimes/bun/node_modules/.bin/bun', args: [] },
];
for (const rt of runtimes) {
  const bin = join(process.cwd(), rt.bin);
  if (hasNative || process.env.CLAW_RANKING_NESTED || !existsSync(bin)) continue;
  test(`ranking equivalence under ${rt.name}`, () => {
    const r = spawnSync(bin, [...rt.args, fileURLToPath(import.meta.url)], {
      env: { ...process.env, CLAW_RANKING_NESTED: '1', NO_COLOR: '1', FORCE_COLOR: '0' },
      encoding: 'utf8',
      timeout: 120_000,
    });
    const out = `${r.stdout}\n${r.stderr}`.replace(/\x1b\[[0-9;]*m/g, '');
    assert.is(r.status, 0, out);
    // sql.js + native equivalence and deletes + the two helper tests must have run there.
    assert.ok(Number(/Passed:\s+(\d+)/.exec(out)?.[1] ?? 0) >= 7, out);
  });
}

test.run();
