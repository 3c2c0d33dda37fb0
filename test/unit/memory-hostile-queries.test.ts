// Query params a client controls must get a result or a clear -32602, never a backend error (-32031 says the
// database failed and invites a retry), and never hold the event loop: query text is free text (docs/memory.md
// "Methods"), top_k any positive integer the wire allows.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { memoryHarness, type MemoryHarness } from './helpers/memory-module.ts';

const STORES = [
  { name: 'context', type: 'conversation' },
  { name: 'notes', type: 'semantic' },
  { name: 'cp', type: 'checkpoint' },
];
let h: MemoryHarness;
let n = 0;
const rid = () => `req-${++n}`;
const words = (count: number, from = 0) => Array.from({ length: count }, (_, i) => `w${i + from}`).join(' ');

test.before(async () => {
  h = await memoryHarness(STORES);
  const store = (store: string, entries: unknown[]) => h.call('claw.memory.store', { store, entries, context: { request_id: rid() } });
  assert.ok((await store('notes', [{ content: 'alpha beta' }, { content: 'w0 gamma' }])).result);
  // A long conversation (500 entries of 50 words): the JS ranking's worst case short of retention.
  for (let i = 0; i < 10; i++) assert.ok((await store('context', Array.from({ length: 50 }, (_, j) => ({ content: words(50, i * 2500 + j * 50) })))).result);
  assert.ok((await store('cp', [{ key: 'task', content: 'step 1' }])).result);
});
test.after(() => h.dispose());

test('query text with thousands of distinct words: an answer, not a backend error (FTS4 expression depth)', async () => {
  for (const count of [5000, 50_000]) {
    const r = await h.call('claw.memory.query', { store: 'notes', query: { type: 'semantic', text: words(count) } });
    assert.is(r.error, undefined, `${count} words: ${r.error?.message}`);
    assert.equal(r.result.entries.map((e: any) => e.content), ['w0 gamma']);
  }
});

test('a conversation searched with a long query answers in bounded time (no per-term scan of every document)', async () => {
  const r = await h.call('claw.memory.query', { store: 'context', query: { type: 'semantic', text: words(10_000) } });
  assert.is(r.error, undefined, r.error?.message);
  assert.ok(r.result.entries.length > 0);
  assert.ok(r.ms < 1000, `took ${Math.round(r.ms)} ms`);
});

test('a query text of megabytes is read for its terms in bounded time (its first 16 KiB)', async () => {
  for (const store of ['notes', 'context']) {
    const r = await h.call('claw.memory.query', { store, query: { type: 'semantic', text: `w0 ${'é '.repeat(1_500_000)}` } });
    assert.is(r.error, undefined, r.error?.message);
    assert.ok(r.result.entries.length > 0, store);
    assert.ok(r.ms < 300, `${store}: took ${Math.round(r.ms)} ms`);
  }
});

test('top_k past the safe integers: -32602, never a SQLite datatype mismatch', async () => {
  for (const [store, query] of [
    ['context', { type: 'time-range', time_range: {} }],
    ['cp', { type: 'key', key: 'task' }],
    ['cp', { type: 'time-range', time_range: {} }],
    ['notes', { type: 'semantic', text: 'alpha' }],
  ] as const) {
    for (const top_k of [1e21, 1e308, 2 ** 53]) {
      const r = await h.call('claw.memory.query', { store, query: { ...query, top_k } });
      assert.is(r.error?.code, -32602, `${store} ${query.type} top_k ${top_k}: ${JSON.stringify(r.result ?? r.error?.message)}`);
      assert.equal((r.error!.data as any).issues.map((i: any) => i.path), ['query.top_k']);
    }
    const ok = await h.call('claw.memory.query', { store, query: { ...query, top_k: 2 ** 53 - 1 } });
    assert.is(ok.error, undefined, ok.error?.message);
  }
});

test.run();
