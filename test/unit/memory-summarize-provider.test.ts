// Issue 4: `summarize` compaction through the session's provider chain (src/memory/summarizer-provider.ts, wired by
// src/runtime/store-providers.ts) against the fake LLM server: the model's text becomes the digest; a chain that does not
// answer gives the deterministic fallback digest, and the compact result says why.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openDatabase } from '../../src/memory/sqlite/open.ts';
import { openMemoryStore, type StoreSpec } from '../../src/memory/stores/index.ts';
import { storeProviders } from '../../src/runtime/store-providers.ts';
import { ENTRY_CHARS, INPUT_CHARS, SUMMARY_INSTRUCTION, summaryPrompt } from '../../src/memory/summarizer-provider.ts';
import { createProviderClient } from '../../src/provider/index.ts';
import { deadUrl, openaiJson, startFakeLlm, type FakeLlm } from '../helpers/fake-llm-server.ts';
import { prov, setup } from './provider-fixtures.ts';

let fake: FakeLlm;
test.before.each(async () => {
  fake = await startFakeLlm();
});
test.after.each(async () => fake.close());

const spec = { name: 'context', type: 'conversation', compaction: { strategy: 'summarize' } } as StoreSpec;

async function conversation(endpoint: string, retry?: unknown) {
  const p = prov('chat', { protocol: 'openai-compatible', endpoint, model: 'small-model', auth: { type: 'none' }, ...(retry ? { retry } : {}) });
  const { deps, log } = setup([p]);
  const chat = createProviderClient(deps);
  const extra = storeProviders({ manifest: deps.manifest, deps, chat: () => chat, log, signal: new AbortController().signal, monotonic: () => 0 })(spec);
  assert.ok(extra.summarizer, 'a summarize store gets a summarizer');
  assert.is(extra.embedder, undefined);
  let n = 0;
  let t = Date.parse('2026-01-01T00:00:00Z');
  const s = openMemoryStore(spec, { db: await openDatabase({ adapter: 'sqljs' }), ...extra, newId: () => `e${++n}`, now: () => new Date((t += 1000)).toISOString(), ownsDatabase: true });
  await s.store(['hello', 'my name is Ada', 'I live in Lyon', 'book a table for 2 at 19:00'].map((content) => ({ content })));
  return { s, deps };
}

test('summarize via the provider chain: the digest holds the model summary, the prompt holds the entries', async () => {
  fake.queue({ json: openaiJson({ content: '  Ada, from Lyon, wants a table for 2 at 19:00.  ', usage: [40, 12] }) });
  const { s, deps } = await conversation(fake.url);
  const r = await s.compact({ keep: 1 });
  assert.equal(r, { entries_before: 4, entries_after: 2, strategy: 'summarize', summarizer: 'summarizer' });
  const all = (await s.query({ type: 'time-range', time_range: {} })).entries;
  assert.equal(all.map((e) => [e.id, e.content]), [
    ['e5', 'Ada, from Lyon, wants a table for 2 at 19:00.'],
    ['e4', 'book a table for 2 at 19:00'],
  ]);
  assert.equal(all[0].metadata, { digest: { count: 3, ids: ['e1', 'e2', 'e3'], from: '2026-01-01T00:00:01.000Z', to: '2026-01-01T00:00:01.000Z', by: 'summarizer' } });
  assert.is(fake.requests.length, 1);
  const body = fake.requests[0].body;
  assert.is(body.model, 'small-model');
  assert.equal(body.messages, [
    { role: 'system', content: SUMMARY_INSTRUCTION },
    {
      role: 'user',
      content: 'Memory entries (3, oldest first):\n[2026-01-01T00:00:01.000Z] hello\n[2026-01-01T00:00:01.000Z] my name is Ada\n[2026-01-01T00:00:01.000Z] I live in Lyon',
    },
  ]);
  // The chain charged the model's usage to the session ledger.
  assert.is(await deps.ledger.usedToday('chat'), 52);
  await s.close();
});

test('summarize with the provider down: fallback digest, the result says why', async () => {
  const { s } = await conversation(await deadUrl(), { max_attempts: 1 });
  const r = await s.compact({ keep: 1 });
  assert.equal(r, {
    entries_before: 4,
    entries_after: 2,
    strategy: 'summarize',
    summarizer: 'fallback',
    summarizer_error: 'Provider unavailable: chat: cannot reach endpoint (ECONNREFUSED)',
  });
  const all = (await s.query({ type: 'time-range', time_range: {} })).entries;
  assert.is(all[0].content, '[digest of 3 entries, 2026-01-01T00:00:01.000Z .. 2026-01-01T00:00:01.000Z]\n- hello\n- my name is Ada\n- I live in Lyon');
  assert.is((all[0].metadata as any).digest.by, 'fallback');
  await s.close();
});

test('summarize with an empty model answer: fallback digest', async () => {
  fake.queue({ json: openaiJson({ content: '   ' }) });
  const { s } = await conversation(fake.url);
  const r = await s.compact({ keep: 1 });
  assert.is(r.summarizer, 'fallback');
  assert.is(r.summarizer_error, 'provider "chat" returned an empty summary');
  await s.close();
});

test('summary prompt is bounded: entries cut at ENTRY_CHARS, the chunk at INPUT_CHARS', () => {
  const long = 'x'.repeat(5000);
  const entries = Array.from({ length: 10 }, (_, i) => ({ id: `e${i}`, content: long, timestamp: '2026-01-01T00:00:00.000Z' }));
  const p = summaryPrompt(entries);
  const lines = p.split('\n');
  assert.ok(p.length <= INPUT_CHARS + 100, String(p.length));
  assert.is(lines[1], `[2026-01-01T00:00:00.000Z] ${'x'.repeat(ENTRY_CHARS - 1)}…`);
  // 7 lines of 1027 characters fit in 8000; the other 3 are counted, not sent.
  assert.is(lines.length, 1 + 7 + 1);
  assert.is(lines[8], '[… 3 more entries not shown]');
});

test.run();
