// Databases made before the lean entries schema (schema 1: store names, UUID ids, ISO text times; sql.js
// journal format 1, JSON records) open, migrate and keep answering exactly as before (src/memory/stores/schema.ts).
// The fixtures in test/fixtures/memory-schema1 were written by the code of commit 6986299: `sqljs/` is a sql.js
// layout (snapshot + a v1 journal holding the later writes), `native/` a node:sqlite file (FTS5).
// expected.json holds what that code returned (ids, query results). The native half runs under the Node 22 and Bun
// of .build/runtimes when this runtime has no node:sqlite (as memory-store-contract does).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '../../src/memory/sqlite/open.ts';
import { nativeAvailable } from '../../src/memory/sqlite/native.ts';
import type { SqliteDatabase } from '../../src/memory/sqlite/types.ts';
import { MemoryParamsError, openMemoryStore } from '../../src/memory/stores/index.ts';

const fixtures = join(process.cwd(), 'test', 'fixtures', 'memory-schema1');
const tmp: string[] = [];

function copy(kind: 'sqljs' | 'native'): string {
  const d = mkdtempSync(join(tmpdir(), 'claw-memory-migrate-'));
  tmp.push(d);
  cpSync(join(fixtures, kind), d, { recursive: true });
  return d;
}

function stores(db: SqliteDatabase) {
  let t = Date.parse('2026-01-01T01:00:00Z'); // within the 7 days that request ids are kept
  const now = () => new Date((t += 1000)).toISOString();
  return {
    conv: openMemoryStore({ name: 'conversation-history', type: 'conversation' }, { db, now }),
    notes: openMemoryStore({ name: 'notes', type: 'semantic', search: { strategy: 'fts-only' } }, { db, now }),
    kv: openMemoryStore({ name: 'prefs', type: 'key-value', scope: 'per-identity' }, { db, now }),
  };
}

const columns = (db: SqliteDatabase, table: string) =>
  db
    .prepare('SELECT name FROM pragma_table_info(?) ORDER BY cid')
    .all(table)
    .map((r) => String(r.name));

async function checkOld(db: SqliteDatabase, expected: Record<string, unknown>) {
  const s = stores(db);
  assert.equal(columns(db, 'claw_memory_entries'), ['seq', 'sid', 'id', 'scope', 'key', 'content', 'metadata', 'ts']);
  assert.equal(columns(db, 'claw_memory_requests'), ['sid', 'request_id', 'fingerprint', 'ids', 'ts']);
  // The same answers as the old code gave: ids (UUIDs kept), content, ISO timestamps to the ms, metadata, scores.
  // expected.json holds what the old code answered, ordered by timestamp; a conversation's time-range is in
  // insertion order (conversation.ts), so the entries are compared as a set and the order on its own.
  const conv = (await s.conv.query({ type: 'time-range' })).entries;
  const byId = (xs: { id: string }[]) => [...xs].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  assert.equal(byId(conv), byId(expected.conv as { id: string }[]));
  assert.equal(
    conv.map((e) => e.content.split(' ')[0]),
    ['first', 'second', 'third', ...(conv.length > 3 ? ['after'] : [])],
    'insertion order: the first request stored "first" then "second" (with its earlier explicit timestamp), then "third"',
  );
  if (expected.notes !== undefined) assert.equal((await s.notes.query({ type: 'semantic', text: 'harbour' })).entries, expected.notes);
  assert.equal((await s.kv.query({ type: 'key', key: 'lang' }, { scope: 'alice' })).entries, expected.kv);
  // Idempotency across the migration: a retry of an old request returns its old ids, writes nothing.
  assert.equal(
    await s.conv.store([{ content: 'first turn about the harbour', metadata: { role: 'user' } }, { content: 'second turn', timestamp: '2025-12-31T23:59:59.123Z' }], {
      requestId: 'req-conv-1',
    }),
    expected.conv1,
  );
  assert.equal(await s.kv.store([{ key: 'lang', content: 'de' }], { requestId: 'req-kv-2', scope: 'alice' }), expected.kv2);
  try {
    await s.conv.store([{ content: 'something else' }], { requestId: 'req-conv-1' });
    assert.unreachable('a reused request id with other entries must conflict');
  } catch (e) {
    assert.instance(e, MemoryParamsError);
    assert.is((e as MemoryParamsError).code, 'memory.request_id_conflict');
  }
  return s;
}

async function migrate(kind: 'sqljs' | 'native') {
  const dir = copy(kind);
  const expected = JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')) as Record<string, unknown>;
  const path = join(dir, 'memory.db');
  let db = await openDatabase({ path, adapter: kind });
  let s = await checkOld(db, expected);
  // New entries get derived ids (the seq, after every old one: the AUTOINCREMENT mark carried over).
  const ids = await s.conv.store([{ content: 'after the migration', timestamp: '2026-01-01T02:00:00.000Z' }], { requestId: 'req-new' });
  assert.equal(ids, ['9'], 'the old code used seqs 1–8');
  const notesIds = await s.notes.store([{ content: 'a harbour seal' }]);
  assert.equal(notesIds, ['10']);
  db.close();
  // Reopen: sql.js replays the migration from its journal (a v1 journal continued in format 1).
  db = await openDatabase({ path, adapter: kind });
  s = await checkOld(db, {
    ...expected,
    conv: [...(expected.conv as unknown[]), { id: '9', content: 'after the migration', timestamp: '2026-01-01T02:00:00.000Z' }],
    notes: undefined,
  });
  const hits = (await s.notes.query({ type: 'semantic', text: 'harbour' })).entries.map((e) => e.id).sort();
  assert.equal(hits, [...(expected.notes as { id: string }[]).map((e) => e.id), '10'].sort());
  assert.equal(await s.conv.store([{ content: 'after the migration', timestamp: '2026-01-01T02:00:00.000Z' }], { requestId: 'req-new' }), ['9']);
  if (kind === 'sqljs') {
    // A snapshot folds the migrated image and starts a journal in format 2; reopening from it answers the same.
    (db as unknown as { durable: { snapshot(): void } }).durable.snapshot();
    await s.kv.store([{ key: 'lang', content: 'it' }], { scope: 'alice' });
    db.close();
    const head = readFileSync(`${path}.claw-journal`).subarray(16, 20);
    assert.is(new DataView(head.buffer, head.byteOffset, 4).getUint32(0, true), 2, 'new journals are format 2');
    db = await openDatabase({ path, adapter: kind });
    s = stores(db);
    assert.equal(
      (await s.kv.query({ type: 'key', key: 'lang' }, { scope: 'alice' })).entries.map((e) => [e.id, e.content]),
      [['11', 'it']],
    );
    assert.is((await s.conv.query({ type: 'time-range' })).entries.length, 4);
  }
  db.close();
}

const hasNative = await nativeAvailable();
if (!process.env.CLAW_MEMORY_MIGRATE_NESTED) test('sql.js: a schema-1 database with a v1 journal migrates on open and answers as before', () => migrate('sqljs'));
if (hasNative) test('native: a schema-1 node:sqlite file migrates on open and answers as before', () => migrate('native'));

// Node 20 has no node:sqlite: the native half runs under the Node 22 and the Bun of .build/runtimes when installed.
const runtimes = [
  { name: 'Node 22 (node:sqlite)', bin: '.build/runtimes/node22/node_modules/.bin/node', args: ['--no-warnings'] },
  { name: 'Bun (bun:sqlite)', bin: '.build/runtimes/bun/node_modules/.bin/bun', args: [] },
];
for (const rt of runtimes) {
  const bin = join(process.cwd(), rt.bin);
  if (hasNative || process.env.CLAW_MEMORY_MIGRATE_NESTED || !existsSync(bin)) continue;
  test(`native migration under ${rt.name}`, () => {
    const r = spawnSync(bin, [...rt.args, fileURLToPath(import.meta.url)], {
      env: { ...process.env, CLAW_MEMORY_MIGRATE_NESTED: '1', NO_COLOR: '1', FORCE_COLOR: '0' },
      encoding: 'utf8',
      timeout: 120_000,
    });
    const out = `${r.stdout}\n${r.stderr}`.replace(/\x1b\[[0-9;]*m/g, '');
    assert.is(r.status, 0, out);
    assert.is(Number(/Passed:\s+(\d+)/.exec(out)?.[1] ?? 0), 1, out);
  });
}

test.after(() => {
  for (const d of tmp) rmSync(d, { recursive: true, force: true });
});

test.run();
