// Contract of the memory stores (src/memory/stores) over every SQLite adapter this runtime has: sql.js in
// memory and durable (always), node:sqlite / bun:sqlite when the runtime provides one. Under Node < 22.5 the
// native half runs by re-executing this compiled file with the Node 22 from .build/runtimes, when installed
// (the approach of sqlite-contract.test.ts).
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
import { MemoryParamsError, openMemoryStore, type ClawMemoryStore, type StoreDeps, type StoreSpec } from '../../src/memory/stores/index.ts';
import { bm25Js, normaliseBm25 } from '../../src/memory/stores/ranking.ts';

const tmpDirs: string[] = [];
function tmpPath(): string {
  const d = mkdtempSync(join(tmpdir(), 'claw-memory-store-'));
  tmpDirs.push(d);
  return join(d, 'memory.db');
}

interface Maker {
  name: string;
  fts: 'fts5' | 'fts4';
  file: boolean;
  options(): OpenOptions;
}

/** Deterministic ids and clock: ids e1, e2, …; the clock ticks one second per call from 2026-01-01T00:00:00Z. */
function deps(db: SqliteDatabase, extra: Partial<StoreDeps> = {}, prefix = 'e'): StoreDeps {
  let n = 0;
  let t = Date.parse('2026-01-01T00:00:00Z');
  return { db, newId: () => `${prefix}${++n}`, now: () => new Date((t += 1000)).toISOString(), ...extra };
}

const at = (min: number) => new Date(Date.parse('2026-01-01T10:00:00Z') + min * 60_000).toISOString();

async function rejects(p: Promise<unknown>, code: string): Promise<void> {
  try {
    await p;
  } catch (e) {
    assert.instance(e, MemoryParamsError);
    assert.is((e as MemoryParamsError).code, code);
    assert.is((e as MemoryParamsError).rpcCode, -32602);
    return;
  }
  assert.unreachable(`expected ${code}`);
}

const CORPUS = [
  'Q4 revenue projected at 2.1M based on current pipeline', // e1
  'Meeting with stakeholders confirmed for March 1', // e2
  'revenue revenue growth in the fourth quarter', // e3
  'The cat sat on the mat', // e4
  'pipeline review: projections for Q4 revenue look strong', // e5
  'weather is sunny today', // e6
  'lunch at noon with the team', // e7
  'deploy the edge runtime to the board', // e8
];

/** A toy embedder: dimensions for revenue-ish, meeting-ish and cat-ish words, plus a constant. */
const embedder = async (texts: string[]) =>
  texts.map((t) => {
    const s = t.toLowerCase();
    return [/revenue|q4|projection/.test(s) ? 1 : 0, /meeting|stakeholder/.test(s) ? 1 : 0, /cat|feline|kitten/.test(s) ? 1 : 0, 0.1];
  });

function contract(m: Maker): void {
  const it = (name: string, fn: () => Promise<void>) => test(`[${m.name}] ${name}`, fn);
  const open = () => openDatabase(m.options());
  const spec = (s: Partial<StoreSpec> & Pick<StoreSpec, 'type'>): StoreSpec => ({ name: 'mem', ...s }) as StoreSpec;

  it('conversation: insertion-order ids, time-range in insertion order with timestamps as the filter, top_k keeps the last inserted', async () => {
    const db = await open();
    const s = openMemoryStore(spec({ type: 'conversation' }), deps(db));
    const ids = await s.store([
      { content: 'hello', timestamp: at(0) },
      { content: 'later', timestamp: at(2), metadata: { role: 'user' } },
      { content: 'middle', timestamp: at(1) },
    ]);
    assert.equal(ids, ['e1', 'e2', 'e3']);
    const all = await s.query({ type: 'time-range', time_range: {} });
    assert.is(all.search, 'time-range');
    assert.equal(
      all.entries.map((e) => [e.id, e.content, e.timestamp]),
      [
        ['e1', 'hello', at(0)],
        ['e2', 'later', at(2)],
        ['e3', 'middle', at(1)],
      ],
    );
    assert.equal(all.entries[1].metadata, { role: 'user' });
    assert.equal((await s.query({ type: 'time-range', time_range: { from: at(0), to: at(2) }, top_k: 2 })).entries.map((e) => e.id), ['e2', 'e3']);
    assert.equal((await s.query({ type: 'time-range', time_range: { from: at(0), to: at(1) }, top_k: 2 })).entries.map((e) => e.id), ['e1', 'e3']);
    assert.equal((await s.query({ type: 'time-range', from: at(1), to: at(1) })).entries.map((e) => e.id), ['e3']);
    // Default timestamps come from the clock.
    assert.equal(await s.store([{ content: { role: 'assistant', text: 'hi' } }]), ['e4']);
    const last = (await s.query({ type: 'time-range', time_range: { from: '2026-01-01T00:00:00Z', to: '2026-01-01T01:00:00Z' } })).entries;
    assert.equal(last.map((e) => [e.content, e.timestamp]), [['{"role":"assistant","text":"hi"}', '2026-01-01T00:00:02.000Z']]);
    await rejects(s.query({ type: 'key', key: 'x' }), 'memory.unsupported_query');
    // Semantic on a conversation (seed TV-L3-03): BM25 in JS over the entries, no index.
    // N = 4, n = 1: idf = ln(3.5 / 1.5); 'later' is 1 token of an average 7/4 → x = idf·2.2 / (1 + 1.2·(0.25 + 0.75·4/7)).
    const sem = await s.query({ type: 'semantic', text: 'LATER, please' });
    assert.equal(sem.entries.map((e) => [e.id, e.content]), [['e2', 'later']]);
    assert.is(sem.entries[0].score, 0.5067652208522211);
    assert.is(sem.search, 'fts');
    assert.equal((await s.query({ type: 'semantic', text: 'nothing matches' })).entries, []);
    await rejects(s.query({ type: 'semantic', text: '  ' }), 'memory.invalid_query');
    await rejects(s.query({ type: 'time-range', time_range: { from: 'yesterday' } }), 'memory.invalid_time');
    await rejects(s.query({ type: 'time-range', top_k: 0 }), 'memory.invalid_query');
    await s.close();
    db.close();
  });

  it('key-value: key lookup, last writer wins, scopes kept apart', async () => {
    const db = await open();
    const s = openMemoryStore(spec({ type: 'key-value' }), deps(db));
    assert.equal(await s.store([{ key: 'lang', content: 'en' }, { key: 'tz', content: 'UTC' }]), ['e1', 'e2']);
    assert.equal(await s.store([{ key: 'lang', content: 'fr', metadata: { by: 'user' } }]), ['e3']);
    const r = await s.query({ type: 'key', key: 'lang' });
    assert.is(r.search, 'key');
    assert.equal(r.entries, [{ id: 'e3', content: 'fr', key: 'lang', timestamp: '2026-01-01T00:00:02.000Z', metadata: { by: 'user' } }]);
    assert.equal((await s.query({ type: 'key', key: 'nope' })).entries, []);
    assert.is(s.count(), 2);
    await rejects(s.store([{ content: 'no key' }]), 'memory.key_required');
    await rejects(s.query({ type: 'key' }), 'memory.invalid_query');
    await rejects(s.query({ type: 'time-range' }), 'memory.unsupported_query');
    await rejects(s.compact({ strategy: 'summarize' }), 'memory.unsupported_compaction');

    const p = openMemoryStore(spec({ name: 'facts', type: 'key-value', scope: 'per-identity' }), deps(db, {}, 'p'));
    await rejects(p.store([{ key: 'k', content: 'v' }]), 'memory.scope_required');
    await p.store([{ key: 'name', content: 'Alice' }], { scope: 'alice' });
    await p.store([{ key: 'name', content: 'Bob' }], { scope: 'bob' });
    assert.equal((await p.query({ type: 'key', key: 'name' }, { scope: 'alice' })).entries.map((e) => e.content), ['Alice']);
    assert.equal((await p.query({ type: 'key', key: 'name' }, { scope: 'bob' })).entries.map((e) => e.content), ['Bob']);
    assert.equal((await p.query({ type: 'key', key: 'name' }, { scope: 'carol' })).entries, []);
    await rejects(p.query({ type: 'key', key: 'name' }), 'memory.scope_required');
    // The other store in the same database is untouched.
    assert.is(s.count(), 2);
    assert.is(p.count(), 2);
    db.close();
  });

  it('semantic: full-text ranking with scores in [0,1], same BM25 as the documented formula', async () => {
    const db = await open();
    const s = openMemoryStore(spec({ type: 'semantic' }), deps(db));
    await s.store(CORPUS.map((content) => ({ content })));
    const r = await s.query({ type: 'semantic', text: 'revenue projections Q4' });
    assert.is(r.search, 'fts');
    assert.is(r.fts, m.fts);
    assert.equal(r.entries.map((e) => e.id), ['e5', 'e1', 'e3']);
    const scores = r.entries.map((e) => e.score!);
    for (const x of scores) assert.ok(x > 0 && x < 1, String(x));
    assert.ok(scores[0] > scores[1] && scores[1] > scores[2], String(scores));
    // FTS5's bm25() is the formula of ranking.ts to the last bit (tokens agree for this corpus); FTS4's
    // matchinfo average document length is an integer, so sql.js scores differ slightly.
    const expected = bm25Js(CORPUS, 'revenue projections Q4').map(normaliseBm25);
    const want = [expected[4], expected[0], expected[2]];
    scores.forEach((x, i) => assert.ok(Math.abs(x - want[i]) < (m.fts === 'fts5' ? 1e-9 : 0.02), `${x} vs ${want[i]}`));
    assert.equal((await s.query({ type: 'semantic', text: 'revenue', top_k: 2 })).entries.map((e) => e.id), ['e3', 'e5']);
    assert.equal((await s.query({ type: 'semantic', text: 'feline' })).entries, []);
    // Operator syntax in the text is quoted away, never an FTS syntax error.
    assert.equal((await s.query({ type: 'semantic', text: 'cat" OR NEAR(* content:' })).entries.map((e) => e.id), ['e4']);
    assert.equal((await s.query({ type: 'semantic', text: '?!' })).entries, []);
    await rejects(s.query({ type: 'semantic' }), 'memory.invalid_query');
    await rejects(s.query({ type: 'time-range' }), 'memory.unsupported_query');
    db.close();
  });

  it('semantic: without FTS in the SQLite, BM25 over JS tokens ranks the same way', async () => {
    const db = await open();
    // The same database seen as one without FTS.
    const noFts = Object.create(db, { capabilities: { value: { fts: 'none' } } }) as SqliteDatabase;
    const s = openMemoryStore(spec({ type: 'semantic' }), deps(noFts));
    await s.store(CORPUS.map((content) => ({ content })));
    const r = await s.query({ type: 'semantic', text: 'revenue projections Q4' });
    assert.is(r.search, 'fts');
    assert.is(r.fts, 'js');
    assert.equal(r.entries.map((e) => e.id), ['e5', 'e1', 'e3']);
    const expected = bm25Js(CORPUS, 'revenue projections Q4').map(normaliseBm25);
    assert.equal(r.entries.map((e) => e.score), [expected[4], expected[0], expected[2]]);
    assert.is(await s.compact({ strategy: 'truncate', keep: 1 }).then((c) => c.entries_after), 1);
    db.close();
  });

  it('semantic: hybrid reciprocal-rank fusion when an embedder is injected', async () => {
    const db = await open();
    const s = openMemoryStore(spec({ type: 'semantic' }), deps(db, { embedder }));
    await s.store(CORPUS.map((content) => ({ content })));
    const r = await s.query({ type: 'semantic', text: 'feline', top_k: 1 });
    assert.is(r.search, 'hybrid');
    // No full-text hit; first in the vector ranking only: (1/61) / (2/61) = 0.5.
    assert.equal(r.entries.map((e) => [e.id, e.score]), [['e4', 0.5]]);
    const h = await s.query({ type: 'semantic', text: 'revenue projections Q4', top_k: 3 });
    // Full text: e5, e1, e3. Vectors: e1, e3, e5 tie at cosine 1 (ties by insertion order).
    // RRF: e1 = 1/62 + 1/61, e5 = 1/61 + 1/63, e3 = 1/63 + 1/62, each over the maximum 2/61.
    assert.equal(h.entries.map((e) => e.id), ['e1', 'e5', 'e3']);
    const want = [1 / 62 + 1 / 61, 1 / 61 + 1 / 63, 1 / 63 + 1 / 62].map((x) => x / (2 / 61));
    h.entries.forEach((e, i) => assert.ok(Math.abs(e.score! - want[i]) < 1e-12, `${e.score} vs ${want[i]}`));
    for (const e of h.entries) assert.ok(e.score! > 0 && e.score! <= 1);
    const fo = openMemoryStore(spec({ type: 'semantic', search: { strategy: 'fts-only' } }), deps(db, { embedder }));
    assert.is((await fo.query({ type: 'semantic', text: 'revenue' })).search, 'fts');
    const vo = openMemoryStore(spec({ type: 'semantic', search: { strategy: 'vector-only' } }), deps(db, { embedder }));
    const v = await vo.query({ type: 'semantic', text: 'kitten', top_k: 1 });
    assert.is(v.search, 'vector');
    assert.equal(v.entries.map((e) => e.id), ['e4']);
    assert.is(v.entries[0].score, 1);
    db.close();
  });

  it('retention.max_entries drops the oldest on store', async () => {
    const db = await open();
    for (const type of ['conversation', 'semantic'] as const) {
      const s = openMemoryStore(spec({ name: type, type, retention: { max_entries: 3 } }), deps(db));
      await s.store([1, 2, 3, 4, 5].map((i) => ({ content: `m${i} word` })));
      assert.is(s.count(), 3);
      await s.store([{ content: 'm6 word' }]);
      const left = (await s.query(type === 'semantic' ? { type: 'semantic', text: 'word' } : { type: 'time-range' })).entries;
      assert.equal(left.map((e) => e.content).sort(), ['m4 word', 'm5 word', 'm6 word']);
    }
    db.close();
  });

  it('compaction: truncate and sliding-window report exact counts', async () => {
    const db = await open();
    const s = openMemoryStore(spec({ type: 'conversation' }), deps(db));
    await s.store(Array.from({ length: 10 }, (_, i) => ({ content: `m${i}`, timestamp: at(i * 10) })));
    assert.equal(await s.compact({ strategy: 'truncate' }), { entries_before: 10, entries_after: 5, strategy: 'truncate' });
    assert.equal((await s.query({ type: 'time-range' })).entries.map((e) => e.content), ['m5', 'm6', 'm7', 'm8', 'm9']);
    assert.equal(await s.compact({ strategy: 'truncate', keep: 2 }), { entries_before: 5, entries_after: 2, strategy: 'truncate' });
    assert.equal(await s.compact({ strategy: 'truncate', keep: 7 }), { entries_before: 2, entries_after: 2, strategy: 'truncate' });

    const w = openMemoryStore(spec({ name: 'w', type: 'conversation', compaction: { strategy: 'sliding-window' } }), deps(db));
    await w.store(Array.from({ length: 10 }, (_, i) => ({ content: `m${i}`, timestamp: at(i * 10) })));
    // Window 30m before the newest (m9 at +90m): m7 (+70), m8, m9 stay (strictly inside: +60 is out).
    assert.equal(await w.compact({ window: '30m' }), { entries_before: 10, entries_after: 3, strategy: 'sliding-window' });
    assert.equal((await w.query({ type: 'time-range' })).entries.map((e) => e.content), ['m7', 'm8', 'm9']);
    assert.equal(await w.compact({ window: '1d', keep: 1 }), { entries_before: 3, entries_after: 1, strategy: 'sliding-window' });
    db.close();
  });

  it('compaction: summarize merges the oldest into digests (fallback and injected summarizer)', async () => {
    const db = await open();
    const s = openMemoryStore(spec({ type: 'semantic', compaction: { strategy: 'summarize' } }), deps(db));
    const ids = await s.store(Array.from({ length: 10 }, (_, i) => ({ content: `note ${i}\n  about  topic${i}`, timestamp: at(i) })));
    const r = await s.compact({ keep: 4, digestSize: 4 });
    // 6 oldest → digests of 4 + 2; 4 kept.
    assert.equal(r, { entries_before: 10, entries_after: 6, strategy: 'summarize', summarizer: 'fallback' });
    const c = openMemoryStore(spec({ type: 'conversation' }), deps(db, {}, 'x'));
    const all = (await c.query({ type: 'time-range' })).entries;
    assert.equal(all.map((e) => e.id), ['e11', 'e12', 'e7', 'e8', 'e9', 'e10']);
    assert.is(
      all[0].content,
      `[digest of 4 entries, ${at(0)} .. ${at(3)}]\n- note 0 about topic0\n- note 1 about topic1\n- note 2 about topic2\n- note 3 about topic3`,
    );
    assert.is(all[0].timestamp, at(3));
    assert.equal(all[1].metadata, { digest: { count: 2, ids: ids.slice(4, 6), from: at(4), to: at(5), by: 'fallback' } });
    // Digests are searchable; merged entries are gone from the index.
    assert.equal((await s.query({ type: 'semantic', text: 'topic1' })).entries.map((e) => e.id), ['e11']);

    const seen: string[][] = [];
    const t = openMemoryStore(
      spec({ name: 't', type: 'conversation' }),
      deps(db, {
        summarizer: async (entries) => {
          seen.push(entries.map((e) => e.id));
          return `summary of ${entries.length}`;
        },
      }),
    );
    await t.store(Array.from({ length: 5 }, (_, i) => ({ content: `c${i}` })));
    assert.equal(await t.compact({ strategy: 'summarize', keep: 1 }), { entries_before: 5, entries_after: 2, strategy: 'summarize', summarizer: 'summarizer' });
    assert.equal(seen, [['e1', 'e2', 'e3', 'e4']]);
    assert.equal((await t.query({ type: 'time-range' })).entries.map((e) => e.content), ['summary of 4', 'c4']);
    db.close();
  });

  it('conversation: turns stored after a reboot with the clock behind (no real-time clock) still come last', async () => {
    const db = await open();
    let clock = Date.parse('2026-06-01T12:00:00Z');
    const s = openMemoryStore(spec({ type: 'conversation' }), deps(db, { now: () => new Date((clock += 1000)).toISOString() }));
    await s.store([{ content: 'before 1' }, { content: 'before 2' }]);
    await s.store([{ content: 'before 3' }]);
    clock = Date.parse('2025-01-01T00:00:00Z'); // the reboot, before NTP
    await s.store([{ content: 'after 1' }]);
    await s.store([{ content: 'after 2' }]);
    const last = (await s.query({ type: 'time-range', top_k: 3 })).entries.map((e) => e.content);
    assert.equal(last, ['before 3', 'after 1', 'after 2']);
    assert.equal((await s.query({ type: 'time-range', time_range: {} })).entries.map((e) => e.content), ['before 1', 'before 2', 'before 3', 'after 1', 'after 2']);
    db.close();
  });

  it('store is idempotent on requestId; a reused id with other entries is refused', async () => {
    const db = await open();
    const s = openMemoryStore(spec({ type: 'conversation' }), deps(db));
    const a = await s.store([{ content: 'once' }, { content: 'twice' }], { requestId: 'r-1' });
    assert.equal(a, ['e1', 'e2']);
    assert.equal(await s.store([{ content: 'once' }, { content: 'twice' }], { requestId: 'r-1' }), ['e1', 'e2']);
    assert.is(s.count(), 2);
    // A retry whose metadata lists its keys in another order is the same request (canonical fingerprint).
    const m1 = await s.store([{ content: 'meta', metadata: { a: 1, b: { c: 2, d: 3 } } }], { requestId: 'r-m' });
    assert.equal(await s.store([{ content: 'meta', metadata: { b: { d: 3, c: 2 }, a: 1 } }], { requestId: 'r-m' }), m1);
    assert.is(s.count(), 3);
    await rejects(s.store([{ content: 'other' }], { requestId: 'r-1' }), 'memory.request_id_conflict');
    assert.equal(await s.store([{ content: 'once' }, { content: 'twice' }], { requestId: 'r-2' }), ['e4', 'e5']);
    // The same request id in another store is another request.
    const o = openMemoryStore(spec({ name: 'other', type: 'conversation' }), deps(db, {}, 'o'));
    assert.equal(await o.store([{ content: 'once' }], { requestId: 'r-1' }), ['o1']);
    db.close();
  });

  if (m.file)
    it('idempotency, entries, FTS index and vectors survive reopen', async () => {
      const opts = m.options();
      const db = await openDatabase(opts);
      const s = openMemoryStore(spec({ type: 'semantic' }), deps(db, { embedder }));
      assert.equal(await s.store([{ content: 'revenue report' }, { content: 'cat picture' }], { requestId: 'req' }), ['e1', 'e2']);
      await s.close();
      db.close();
      const again = await openDatabase(opts);
      const s2 = openMemoryStore(spec({ type: 'semantic' }), deps(again, { embedder }, 'z'));
      assert.equal(await s2.store([{ content: 'revenue report' }, { content: 'cat picture' }], { requestId: 'req' }), ['e1', 'e2']);
      assert.is(s2.count(), 2);
      assert.equal((await s2.query({ type: 'semantic', text: 'report', top_k: 1 })).entries.map((e) => e.id), ['e1']);
      assert.equal((await s2.query({ type: 'semantic', text: 'kitten', top_k: 1 })).entries.map((e) => e.id), ['e2']);
      assert.equal(await s2.store([{ content: 'new' }], { requestId: 'req-2' }), ['z1']);
      again.close();
    });

  it('a closed store refuses calls; workspace stores are not provided here', async () => {
    const db = await open();
    const s: ClawMemoryStore = openMemoryStore(spec({ type: 'conversation' }), deps(db));
    await s.close();
    await rejects(s.store([{ content: 'x' }]), 'memory.closed');
    assert.throws(() => openMemoryStore(spec({ type: 'workspace' }), deps(db)), /not provided/);
    db.close();
  });
}

const makers: Maker[] = [
  { name: 'sqljs:memory', fts: 'fts4', file: false, options: () => ({ adapter: 'sqljs' }) },
  { name: 'sqljs:durable', fts: 'fts4', file: true, options: () => ({ adapter: 'sqljs', path: tmpPath() }) },
];
const hasNative = await nativeAvailable();
if (hasNative) {
  makers.push({ name: 'native:memory', fts: 'fts5', file: false, options: () => ({ adapter: 'native' }) });
  makers.push({ name: 'native:file', fts: 'fts5', file: true, options: () => ({ adapter: 'native', path: tmpPath() }) });
}
for (const m of makers) contract(m);

// Node 20 has no node:sqlite: run this compiled file again under the Node 22 and the Bun of .build/runtimes
// (scripts/install-runtimes.sh), where the native adapter joins. Skipped quietly when not installed.
const runtimes = [
  { name: 'Node 22 (node:sqlite)', bin: '.build/runtimes/node22/node_modules/.bin/node', args: ['--no-warnings'] },
  { name: 'Bun (bun:sqlite)', bin: '.build/runtimes/bun/node_modules/.bin/bun', args: [] },
];
for (const rt of runtimes) {
  const bin = join(process.cwd(), rt.bin);
  if (hasNative || process.env.CLAW_MEMORY_STORE_NESTED || !existsSync(bin)) continue;
  test(`memory store contract under ${rt.name}`, () => {
    const r = spawnSync(bin, [...rt.args, fileURLToPath(import.meta.url)], {
      env: { ...process.env, CLAW_MEMORY_STORE_NESTED: '1', NO_COLOR: '1', FORCE_COLOR: '0' },
      encoding: 'utf8',
      timeout: 120_000,
    });
    const out = `${r.stdout}\n${r.stderr}`.replace(/\x1b\[[0-9;]*m/g, '');
    assert.is(r.status, 0, out);
    // The native makers must really have run there: 4 makers × 10 tests + 2 reopen tests.
    const passed = Number(/Passed:\s+(\d+)/.exec(out)?.[1] ?? 0);
    assert.ok(passed >= 42, out);
  });
}

test.after(() => {
  for (const d of tmpDirs) rmSync(d, { recursive: true, force: true });
});

test.run();
