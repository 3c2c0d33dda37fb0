// Memory methods end to end through dist/claw.mjs (spec §9.3.4, seed TV-L3-03 / TV-L3-08): exact replies,
// persistence across restarts, request_id idempotency after a restart, every store type on the wire, the errors.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { CLAW, initParams, startClaw, type ClawRun } from './helpers/claw-process.ts';
import { assertCleanStreams, stderrRecords } from './helpers/e2e-util.ts';
import { agentDir, all, ISO, query, rid, startAgent, store, ENTRY_ID } from './memory-agent.ts';

const dirs: string[] = [];
const live: ClawRun[] = [];
function track<T extends { dir: string }>(a: T): T {
  dirs.push(a.dir);
  return a;
}
async function run(a: { dir: string; manifest: string }, env?: Record<string, string>): Promise<ClawRun> {
  const c = await startAgent(a, { env });
  live.push(c);
  return c;
}
async function stop(c: ClawRun): Promise<void> {
  assertCleanStreams(c);
  assert.is(await c.end(), 0);
}

test('TV-L3-03 store → query finds it, TV-L3-08 compact counts (exact replies)', async () => {
  const a = track(agentDir());
  const c = await run(a);
  const t0 = Date.now();
  c.send({
    jsonrpc: '2.0',
    id: 30,
    method: 'claw.memory.store',
    params: { store: 'context', entries: [{ content: 'Project deadline is March 15' }], context: { request_id: '66666666-7777-8888-9999-aaaaaaaaaaaa' } },
  });
  const stored = await c.waitFor((m) => m.id === 30);
  const t1 = Date.now();
  assert.equal(Object.keys(stored.result), ['stored', 'ids']);
  assert.is(stored.result.stored, 1);
  assert.is(stored.result.ids.length, 1);
  assert.match(stored.result.ids[0], ENTRY_ID);
  c.send({ jsonrpc: '2.0', id: 31, method: 'claw.memory.query', params: { store: 'context', query: { type: 'semantic', text: 'deadline' } } });
  const found = await c.waitFor((m) => m.id === 31);
  const ts = found.result.entries[0]?.timestamp;
  assert.match(ts, ISO);
  assert.ok(Date.parse(ts) >= t0 - 1 && Date.parse(ts) <= t1, ts);
  // BM25 with one document: idf = ln(0.5 / 1.5) < 0 is floored at 1e-6 (FTS5's rule), score = x / (1 + x).
  assert.equal(found, {
    jsonrpc: '2.0',
    id: 31,
    result: { entries: [{ id: stored.result.ids[0], content: 'Project deadline is March 15', score: 9.99999000001e-7, timestamp: ts }] },
  });
  c.send({ jsonrpc: '2.0', id: 50, method: 'claw.memory.compact', params: { store: 'context' } });
  assert.equal(await c.waitFor((m) => m.id === 50), { jsonrpc: '2.0', id: 50, result: { entries_before: 1, entries_after: 1 } });
  // Default strategy truncate keeps the newest ⌈n/2⌉ (docs/memory.md).
  await store(c, 'context', [{ content: 'two' }, { content: 'three' }, { content: 'four' }]);
  assert.equal((await c.request('claw.memory.compact', { store: 'context' })).result, { entries_before: 4, entries_after: 2 });
  assert.equal((await all(c)).map((e: any) => e.content), ['three', 'four']);
  await stop(c);
});

test('entries and request ids survive a restart: a repeated request_id returns the original ids, stores nothing', async () => {
  const a = track(agentDir());
  let c = await run(a);
  const R = rid();
  const first = await store(c, 'context', [{ content: 'alpha', metadata: { source: 'calendar-tool' } }, { content: { role: 'user', text: 'beta' } }], R);
  assert.is(first.result.stored, 2);
  await stop(c);
  c = await run(a);
  const again = await store(c, 'context', [{ content: 'alpha', metadata: { source: 'calendar-tool' } }, { content: { role: 'user', text: 'beta' } }], R);
  assert.equal(again.result, first.result);
  const entries = await all(c);
  assert.equal(
    entries.map((e: any) => [e.id, e.content, e.metadata]),
    [
      [first.result.ids[0], 'alpha', { source: 'calendar-tool' }],
      [first.result.ids[1], '{"role":"user","text":"beta"}', undefined],
    ],
  );
  const conflict = await store(c, 'context', [{ content: 'other' }], R);
  assert.is(conflict.error.code, -32602);
  assert.equal(conflict.error.data, { store: 'context', reason: 'memory.request_id_conflict' });
  assert.is((await all(c)).length, 2);
  await stop(c);
});

const STORES = `        - name: "facts"
          type: "key-value"
          scope: "per-identity"
        - name: "knowledge"
          type: "semantic"
          search: { strategy: "fts-only", top_k: 3 }
        - name: "plans"
          type: "checkpoint"
          checkpoint: { max_snapshots: 2, ttl: "24h" }
        - name: "files"
          type: "workspace"
          path: "~/ws/{identity_name}/"
          isolation: "per-identity"
          max_size_mb: 1`;

test('every store type on the wire: key-value, semantic, checkpoint, workspace', async () => {
  const a = track(agentDir({ stores: STORES }));
  const c = await run(a, { HOME: join(a.dir, 'home') });
  // key-value: last writer wins, one value per key; per-identity partitions by context.identity.
  const k1 = await store(c, 'facts', [{ key: 'tz', content: 'UTC' }]);
  const k2 = await store(c, 'facts', [{ key: 'tz', content: 'Europe/Paris' }]);
  await c.request('claw.memory.store', { store: 'facts', entries: [{ key: 'tz', content: 'Asia/Tokyo' }], context: { request_id: rid(), identity: 'someone-else' } });
  const kv = await query(c, 'facts', { type: 'key', key: 'tz' });
  assert.equal(kv.result.entries.map((e: any) => [e.id, e.content]), [[k2.result.ids[0], 'Europe/Paris']]);
  assert.is.not(k1.result.ids[0], k2.result.ids[0]);
  const other = await query(c, 'facts', { type: 'key', key: 'tz' }, { context: { identity: 'someone-else' } });
  assert.equal(other.result.entries.map((e: any) => e.content), ['Asia/Tokyo']);
  assert.equal((await c.request('claw.memory.compact', { store: 'facts' })).result, { entries_before: 2, entries_after: 2 });
  // semantic (sql.js: FTS4): five 3-token documents, 'revenue' in one: idf = ln(4.5 / 1.5) = ln 3, x = ln 3.
  const docs = ['revenue grew fast', 'cats sleep often', 'rain falls today', 'trains run late', 'birds sing loudly'];
  const sem = await store(c, 'knowledge', docs.map((content) => ({ content })));
  const hit = await query(c, 'knowledge', { type: 'semantic', text: 'Revenue?' });
  assert.equal(hit.result.entries.map((e: any) => [e.id, e.content, e.score]), [[sem.result.ids[0], 'revenue grew fast', 0.5234946419594956]]);
  assert.ok(Math.abs(hit.result.entries[0].score - Math.log(3) / (1 + Math.log(3))) < 1e-15);
  assert.is((await query(c, 'knowledge', { type: 'time-range', time_range: {} })).error.code, -32602);
  // checkpoint: max_snapshots 2 per task, newest first.
  for (const step of [1, 2, 3]) await store(c, 'plans', [{ key: 'task-1', content: { step } }]);
  await store(c, 'plans', [{ key: 'task-2', content: { step: 1 } }]);
  const cp = await query(c, 'plans', { type: 'key', key: 'task-1' });
  assert.equal(cp.result.entries.map((e: any) => e.content), ['{"step":3}', '{"step":2}']);
  assert.equal((await query(c, 'plans', { type: 'key', key: 'task-1', top_k: 1 })).result.entries.map((e: any) => e.content), ['{"step":3}']);
  assert.equal((await c.request('claw.memory.compact', { store: 'plans' })).result, { entries_before: 3, entries_after: 3 });
  const sum = await c.request('claw.memory.store', { store: 'plans', entries: [{ content: 'no key' }], context: { request_id: rid() } });
  assert.is(sum.error.code, -32602);
  assert.is(sum.error.data.reason, 'memory.key_required');
  // workspace: {identity_name} and ~ resolved, per-identity sub-directory, files on disk, ids = paths.
  const ws = await store(c, 'files', [{ key: 'notes/a.txt', content: 'deploy the edge runtime' }]);
  assert.equal(ws.result, { stored: 1, ids: ['notes/a.txt'] });
  const onDisk = join(a.dir, 'home', 'ws', 'full-agent', 'full-agent', 'notes', 'a.txt');
  assert.is(readFileSync(onDisk, 'utf8'), 'deploy the edge runtime');
  const byKey = await query(c, 'files', { type: 'key', key: 'notes/a.txt' });
  assert.equal(byKey.result.entries.map((e: any) => [e.id, e.content]), [['notes/a.txt', 'deploy the edge runtime']]);
  assert.match(byKey.result.entries[0].timestamp, ISO);
  assert.equal((await query(c, 'files', { type: 'key', key: 'notes/a.txt' }, { context: { identity: 'intruder' } })).result.entries, []);
  const esc = await store(c, 'files', [{ key: '../../escape.txt', content: 'x' }]);
  assert.equal([esc.error.code, esc.error.data.reason], [-32602, 'memory.invalid_key']);
  assert.not.ok(existsSync(join(a.dir, 'home', 'ws', 'escape.txt')));
  const big = await store(c, 'files', [{ key: 'big.bin', content: 'x'.repeat(1024 * 1024) }]);
  assert.is(big.error.code, -32030);
  assert.is(big.error.data.reason, 'memory.workspace_full');
  assert.match(big.error.message, /over its max_size_mb of 1; nothing was written/);
  assert.not.ok(existsSync(join(a.dir, 'home', 'ws', 'full-agent', 'full-agent', 'big.bin')));
  const wc = await c.request('claw.memory.compact', { store: 'files' });
  assert.is(wc.error.code, -32602);
  assert.match(wc.error.message, /claw\.memory\.compact does not apply to workspace store 'files'/);
  await stop(c);
});

test('params and level errors: unknown store named, issues listed, -32601 without memory, runtime stays up', async () => {
  const a = track(agentDir());
  const c = await run(a);
  const unknown = await query(c, 'nope', { type: 'semantic', text: 'x' });
  assert.equal(unknown.error, { code: -32602, message: 'Invalid params: unknown memory store "nope"', data: { store: 'nope', available: ['context'] } });
  const noCtx = await c.request('claw.memory.store', { store: 'context', entries: [{ content: 'x' }] });
  assert.equal(noCtx.error.code, -32602);
  assert.equal(noCtx.error.data.issues.map((i: any) => i.path), ['context']);
  const noText = await query(c, 'context', { type: 'semantic' });
  assert.equal(noText.error.data, { issues: [{ path: 'query.text', message: 'required for a semantic query' }] });
  const badType = await query(c, 'context', { type: 'vector', text: 'x' });
  assert.equal(badType.error.data.issues.map((i: any) => i.path), ['query.type']);
  const wrongType = await query(c, 'context', { type: 'key', key: 'k' });
  assert.equal(wrongType.error.data, { store: 'context', reason: 'memory.unsupported_query' });
  assert.is((await c.request('claw.status')).result.state, 'READY');
  await stop(c);

  // A Level 2 manifest (no Memory, Skill, Swarm): the memory methods do not exist for it (§11).
  const b = track(agentDir({ memory: false }));
  const d = startClaw(['run', b.manifest], { cwd: b.dir });
  live.push(d);
  const init = await d.request('claw.initialize', initParams());
  assert.is(init.result.conformanceLevel, 'level-2');
  assert.equal(init.result.capabilities, { tools: {} });
  const r = await d.request('claw.memory.store', { store: 'context', entries: [{ content: 'x' }], context: { request_id: rid() } });
  assert.is(r.error.code, -32601);
  assert.not.ok(existsSync(join(b.dir, '.claw-data', 'memory')), 'no database opened below level 3');
  await stop(d);
});

test('a backend that cannot open answers -32030 naming the file; other methods keep working', async () => {
  const a = track(agentDir());
  // The database path is taken by a directory: the snapshot cannot be read.
  mkdirSync(join(a.dir, '.claw-data', 'memory', 'memory-0.db'), { recursive: true });
  const c = await run(a);
  const r = await store(c, 'context', [{ content: 'x' }]);
  assert.is(r.error.code, -32030);
  assert.ok(r.error.message.startsWith('Memory backend error: '), r.error.message);
  assert.ok(r.error.message.includes(join(a.dir, '.claw-data', 'memory', 'memory-0.db')), r.error.message);
  assert.equal(r.error.data, { store: 'context', retryable: true });
  assert.is((await query(c, 'context', { type: 'semantic', text: 'x' })).error.code, -32030);
  assert.is((await c.request('claw.status')).result.state, 'READY');
  const echo = await c.request('claw.tool.call', { name: 'search', arguments: { query: 'q' }, context: { request_id: rid(), identity: 'full-agent' } });
  assert.ok(echo.result, JSON.stringify(echo));
  assert.ok(stderrRecords(c.stderr()).some((l) => l.msg === 'memory backend unavailable' && l.error.includes('memory-0.db')));
  await stop(c);
});

test('a tool call retried after a restart gets its first answer: dedup outcomes live in the memory database', async () => {
  const a = track(agentDir());
  let c = await run(a);
  const R = rid();
  const call = (query: string) => c.request('claw.tool.call', { name: 'search', arguments: { query }, context: { request_id: R, identity: 'full-agent' } });
  const first = await call('edge boards');
  assert.ok(first.result, JSON.stringify(first));
  await stop(c);
  c = await run(a);
  assert.equal((await call('edge boards')).result, first.result);
  const other = await call('something else');
  assert.is(other.error.code, -32602);
  assert.match(other.error.message, /already used for a different call/);
  await stop(c);
});

test('the bundle finds sql-wasm.wasm beside itself (import.meta.url), anywhere; without it, -32030 names the path', async () => {
  const a = track(agentDir());
  const bin = join(a.dir, 'bin');
  mkdirSync(bin);
  // The shipped dist/ as a user copies it: the loader, its chunks directory and the wasm (docs/startup.md).
  cpSync(dirname(CLAW), bin, { recursive: true });
  // Outside the repository (no node_modules to fall back to): the copy runs instead of dist/claw.mjs.
  const startCopy = () => startClaw(['run', a.manifest], { cwd: a.dir, wrap: ['sh', '-c', `shift; exec "$0" '${join(bin, 'claw.mjs')}' "$@"`] });
  const own = startCopy();
  live.push(own);
  assert.ok((await own.request('claw.initialize', initParams())).result);
  assert.ok((await store(own, 'context', [{ content: 'relocated' }])).result);
  assert.is(await own.end(), 0);
  rmSync(join(bin, 'sql-wasm.wasm'));
  rmSync(join(a.dir, '.claw-data'), { recursive: true });
  const none = startCopy();
  live.push(none);
  assert.ok((await none.request('claw.initialize', initParams())).result);
  const r = await store(none, 'context', [{ content: 'x' }]);
  assert.is(r.error.code, -32030);
  assert.ok(r.error.message.includes(`sql.js WebAssembly not found at ${join(bin, 'sql-wasm.wasm')}`), r.error.message);
  assert.is(await none.end(), 0);
});

// Issue 4: a semantic store that declares embedding.provider_ref searches by full text alone when that provider
// does not answer (this runtime has no embedding client: docs/memory.md "Not done"), and the result says so.
test('semantic store with embedding.provider_ref and no answering embedder: full-text results, metadata says so', async () => {
  const stores = `        - name: "notes"
          type: "semantic"
          embedding: { provider_ref: "provider-0", model: "nomic-embed-text", dimensions: 8 }
        - name: "plain"
          type: "semantic"`;
  const a = track(agentDir({ stores }));
  const c = await run(a);
  const docs = ['revenue grew fast', 'cats sleep often', 'rain falls today', 'trains run late', 'birds sing loudly'];
  const ids = (await store(c, 'notes', docs.map((content) => ({ content })))).result.ids;
  await store(c, 'plain', docs.map((content) => ({ content })));
  const r = await query(c, 'notes', { type: 'semantic', text: 'revenue' });
  // The reason names the provider and may say why it did not answer (an anthropic-native provider has no embeddings API).
  assert.equal(Object.keys(r.result.metadata).sort(), ['reason', 'search']);
  assert.is(r.result.metadata.search, 'fts');
  assert.match(r.result.metadata.reason, /^embedding provider "provider-0" did not answer\b.*; full-text search only$/);
  assert.equal(r.result.entries.map((e: any) => [e.id, e.content, e.score]), [[ids[0], 'revenue grew fast', 0.5234946419594956]]);
  // A store without an embedding declares nothing: its result is the entries alone.
  const plain = await query(c, 'plain', { type: 'semantic', text: 'revenue' });
  assert.equal(Object.keys(plain.result), ['entries']);
  assert.is(plain.result.entries.length, 1);
  await stop(c);
});

test.after(() => {
  for (const c of live) if (c.child.exitCode === null && c.child.signalCode === null) c.kill();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test.run();
