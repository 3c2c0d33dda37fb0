// Strings of every kind survive the memory database: what store() acknowledged is what a query returns, live and
// after a reopen (journal replay), on the journalled sql.js adapter the memory service uses. Seeded random strings
// over an alphabet of the awkward cases: NUL, U+FFFD, non-characters, astral pairs, lone surrogates. A lone
// surrogate cannot reach storage from the wire (docs/protocol.md "Strings"); what the runtime itself stores is
// made well-formed once (U+FFFD), identically live and on replay.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/memory/sqlite/open.ts';
import type { SqliteDatabase } from '../../src/memory/sqlite/types.ts';
import { openMemoryStore, type ClawMemoryStore, type StoreSpec } from '../../src/memory/stores/index.ts';
import { isWellFormed, toWellFormed, illFormedPath } from '../../src/protocol/well-formed.ts';
import { seededRandom } from '../helpers/rng.ts';

const ALPHABET = ['a', 'Z', ' ', '\ufeff', '\u0000', '\u0001', '\ufffd', '\uffff', '\ufffe', '\ufdd0', '\u{10ffff}', '\u{1f600}', 'é', '\u0080', '\u2028', '"', '\\', '\ud800', '\udc00', '\udbff'];

function randomString(r: () => number, wellFormed: boolean): string {
  const n = 1 + Math.floor(r() * 6);
  let s = '';
  for (let i = 0; i < n; i++) s += ALPHABET[Math.floor(r() * (wellFormed ? ALPHABET.length - 3 : ALPHABET.length))];
  return s;
}

const dirs: string[] = [];
test.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const SPECS: StoreSpec[] = [
  { name: 'conv', type: 'conversation' } as StoreSpec,
  { name: 'kv', type: 'key-value' } as StoreSpec,
];

/** One clock for every open: insertion order and time order agree. */
let t = Date.parse('2026-01-01T00:00:00Z');

async function open(path: string): Promise<{ db: SqliteDatabase; conv: ClawMemoryStore; kv: ClawMemoryStore }> {
  const db = await openDatabase({ path, adapter: 'sqljs' });
  const now = () => new Date((t += 1000)).toISOString();
  return { db, conv: openMemoryStore(SPECS[0], { db, now }), kv: openMemoryStore(SPECS[1], { db, now }) };
}

async function snapshot(s: { conv: ClawMemoryStore; kv: ClawMemoryStore }, keys: Iterable<string>): Promise<unknown> {
  const conv = await s.conv.query({ type: 'time-range', time_range: {} } as never);
  const kv: Record<string, unknown> = {};
  for (const k of keys) kv[JSON.stringify(k)] = (await s.kv.query({ type: 'key', key: k } as never)).entries.map((e) => [e.key, e.content]);
  return { conv: conv.entries.map((e) => [e.content, e.metadata]), kv };
}

for (const [label, wellFormed] of [['well-formed', true], ['with lone surrogates', false]] as const) {
  test(`store → reopen → query returns what was acknowledged (${label} strings, seeded)`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'claw-unicode-'));
    dirs.push(dir);
    const path = join(dir, 'memory.db');
    const r = seededRandom(wellFormed ? 7 : 11);
    let s = await open(path);
    const expectedConv: unknown[] = [];
    const expectedKv = new Map<string, string>();
    const usedIds = new Map<string, string>();
    for (let i = 0; i < 300; i++) {
      const requestId = randomString(r, wellFormed);
      const content = randomString(r, wellFormed);
      const metaKey = randomString(r, wellFormed);
      const metaValue = randomString(r, wellFormed);
      const toKv = r() < 0.5;
      const key = randomString(r, wellFormed);
      const entry = toKv ? { content, key } : { content, metadata: { [metaKey]: metaValue } };
      const fp = JSON.stringify([toKv, toWellFormed(content), toWellFormed(key), toWellFormed(metaKey), toWellFormed(metaValue)]);
      const id = toWellFormed(requestId) + (toKv ? ':kv' : ':conv');
      try {
        await (toKv ? s.kv : s.conv).store([entry], { requestId });
      } catch (e) {
        // The only refusal: a request id (as stored) reused for other entries.
        assert.is((e as { code?: string }).code, 'memory.request_id_conflict', String(e));
        assert.ok(usedIds.has(id) && usedIds.get(id) !== fp, `unexpected conflict for ${JSON.stringify(requestId)}`);
        continue;
      }
      if (usedIds.has(id)) continue; // a retry: answered from the first store, nothing new
      usedIds.set(id, fp);
      if (toKv) expectedKv.set(toWellFormed(key), toWellFormed(content));
      else expectedConv.push([toWellFormed(content), { [metaKey]: metaValue }]);
      if (i === 150) {
        // Halfway: reopen, so the second half is journalled on top of a replayed database.
        s.db.close();
        s = await open(path);
      }
    }
    const keys = [...expectedKv.keys()];
    const live = await snapshot(s, keys);
    s.db.close();
    s = await open(path);
    const replayed = await snapshot(s, keys);
    s.db.close();
    assert.equal(replayed, live, 'replay differs from the live database');
    const conv = (live as { conv: [string, Record<string, string>][] }).conv;
    assert.is(conv.length, expectedConv.length);
    conv.forEach(([content, meta], i) => {
      const [c, m] = expectedConv[i] as [string, Record<string, string>];
      assert.is(content, c);
      // Metadata is JSON text: JSON.stringify escapes a lone surrogate, so it comes back exactly as given.
      assert.equal(meta, m);
      assert.ok(isWellFormed(content));
    });
    for (const [k, v] of expectedKv) {
      assert.equal((live as { kv: Record<string, unknown> }).kv[JSON.stringify(k)], [[k, v]], `key ${JSON.stringify(k)}`);
    }
  });
}

test('a string that starts with U+FEFF comes back with it after a reopen (journal strings are not BOM-stripped)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-unicode-'));
  dirs.push(dir);
  const path = join(dir, 'memory.db');
  let s = await open(path);
  await s.kv.store([{ key: '\ufeff', content: '\ufeffhello' }], { requestId: '\ufeffreq' });
  await s.conv.store([{ content: '\ufeff' }]);
  const live = await snapshot(s, ['\ufeff']);
  s.db.close();
  s = await open(path);
  assert.equal(await snapshot(s, ['\ufeff']), live);
  assert.equal(live, { conv: [['\ufeff', undefined]], kv: { [JSON.stringify('\ufeff')]: [['\ufeff', '\ufeffhello']] } });
  // The same request again is a retry (its id kept as written), not a new write.
  await s.kv.store([{ key: '\ufeff', content: '\ufeffhello' }], { requestId: '\ufeffreq' });
  assert.is(s.kv.count(), 1);
  s.db.close();
});

test('illFormedPath names the first string with a lone surrogate, keys included', () => {
  assert.is(illFormedPath({ a: ['ok', '\ud83d\ude00'], b: 1 }), undefined);
  assert.is(illFormedPath({ context: { request_id: '\ud800' } }), 'context.request_id');
  assert.is(illFormedPath({ entries: [{ content: 'x' }, { content: 'x\udc00y' }] }), 'entries.1.content');
  assert.is(illFormedPath({ ['k\ud800']: 1 }), 'k\ud800');
  assert.is(illFormedPath('\udfff'), '');
  assert.is(toWellFormed('x\ud800y\ud83d\ude00\udc00'), 'x\ufffdy\ud83d\ude00\ufffd');
});

test.run();
