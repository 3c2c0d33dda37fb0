// Issue 4 end to end through dist/claw.mjs: a semantic store with `embedding.provider_ref` searches hybrid (RRF of
// full text and the provider's embeddings) while the provider answers, full text with the reason when it does not;
// `summarize` compaction goes through the session's provider chain, or gives the fallback digest when it is down.
// The provider is the fake LLM server (its /embeddings route embeds into a 3-axis "meaning" space).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync, rmSync } from 'node:fs';
import type { ClawRun } from './helpers/claw-process.ts';
import { assertCleanStreams, stderrRecords } from './helpers/e2e-util.ts';
import { agentDir, all, l3Manifest, query, startAgent, store } from './memory-agent.ts';
import { deadUrl, openaiJson, startFakeLlm, type FakeLlm } from '../helpers/fake-llm-server.ts';

const AXES: Record<string, number> = { cat: 0, feline: 0, food: 1, prices: 1, dogs: 2, bark: 2 };
function meaning(text: string): number[] {
  const v = [0, 0, 0];
  for (const w of text.toLowerCase().split(/\W+/)) if (w in AXES) v[AXES[w]] += 1;
  return v.every((x) => x === 0) ? [0.01, 0.01, 0.01] : v;
}

const STORES = `        - name: "notes"
          type: "semantic"
          embedding: { provider_ref: "provider-0", model: "nomic-embed-text", dimensions: 3 }
        - name: "context"
          type: "conversation"
          compaction: { enabled: true, strategy: "summarize" }`;

const dirs: string[] = [];
const live: ClawRun[] = [];
let fake: FakeLlm;

/** TV-L3-01's agent with its one provider swapped for an openai-compatible one at `endpoint` (no retries). */
async function agent(endpoint: string): Promise<ClawRun> {
  const a = agentDir({ stores: STORES });
  dirs.push(a.dir);
  const manifest = l3Manifest(STORES).replace(
    /    - inline:\n        protocol: "anthropic-native"\n(?:        .*\n){3}/,
    `    - inline:\n        protocol: "openai-compatible"\n        endpoint: "${endpoint}"\n        model: "small-model"\n        auth: { type: "none" }\n        retry: { max_attempts: 1 }\n`,
  );
  assert.ok(manifest.includes('openai-compatible'), 'provider block replaced');
  writeFileSync(a.manifest, manifest);
  const c = await startAgent(a);
  live.push(c);
  return c;
}

const DOCS = ['the feline rests on the mat', 'cat food prices', 'dogs bark'];
const TURNS = ['hello', 'my name is Ada', 'I live in Lyon', 'book a table for 2 at 19:00'];

test.before.each(async () => {
  fake = await startFakeLlm();
  fake.embeddings = (input) => input.map(meaning);
});
test.after.each(async () => fake.close());

test('provider answers: hybrid query (both signals, metadata search hybrid), summarize digest holds the model summary', async () => {
  const c = await agent(`${fake.url}/v1`);
  const ids = (await store(c, 'notes', DOCS.map((content) => ({ content })))).result.ids;
  const r = await query(c, 'notes', { type: 'semantic', text: 'cat' });
  assert.equal(r.result.metadata, { search: 'hybrid' });
  // Full text finds only "cat food prices"; the vectors bring "the feline…" (cos 1) above "dogs bark" (cos 0).
  assert.equal(
    r.result.entries.map((e: any) => [e.id, e.score]),
    [
      [ids[1], ((1 / 61 + 1 / 62) * 61) / 2],
      [ids[0], ((1 / 61) * 61) / 2],
      [ids[2], ((1 / 63) * 61) / 2],
    ],
  );
  const emb = fake.requests.filter((q) => q.url === '/v1/embeddings').map((q) => q.body);
  assert.equal(emb, [
    { model: 'nomic-embed-text', input: DOCS },
    { model: 'nomic-embed-text', input: ['cat'] },
  ]);

  await store(c, 'context', TURNS.map((content) => ({ content })));
  fake.queue({ json: openaiJson({ content: 'Ada greeted the agent.', usage: [30, 5] }) });
  const k = await c.request('claw.memory.compact', { store: 'context' });
  assert.equal(k.result, { entries_before: 4, entries_after: 3, metadata: { strategy: 'summarize', summarizer: 'provider' } });
  const chat = fake.requests.filter((q) => q.url === '/v1/chat/completions');
  assert.is(chat.length, 1);
  assert.match(chat[0].body.messages[1].content, /^Memory entries \(2, oldest first\):\n\[[^\]]+\] hello\n\[[^\]]+\] my name is Ada$/);
  const entries = await all(c, 'context');
  assert.equal(entries.map((e: any) => e.content), ['Ada greeted the agent.', 'I live in Lyon', 'book a table for 2 at 19:00']);
  assert.is(entries[0].metadata.digest.by, 'summarizer');
  assertCleanStreams(c);
  assert.is(await c.end(), 0);
});

test('provider down: full-text query with the reason, summarize falls back to the digest (said in metadata, logged)', async () => {
  const c = await agent(await deadUrl());
  const ids = (await store(c, 'notes', DOCS.map((content) => ({ content })))).result.ids;
  assert.is(ids.length, 3);
  const r = await query(c, 'notes', { type: 'semantic', text: 'cat' });
  assert.equal(r.result.metadata, {
    search: 'fts',
    reason: 'embedding provider "provider-0" did not answer (provider-0: cannot reach endpoint (ECONNREFUSED)); full-text search only',
  });
  assert.equal(r.result.entries.map((e: any) => e.id), [ids[1]]);

  await store(c, 'context', TURNS.map((content) => ({ content })));
  const k = await c.request('claw.memory.compact', { store: 'context' });
  assert.equal(k.result, {
    entries_before: 4,
    entries_after: 3,
    metadata: { strategy: 'summarize', summarizer: 'fallback', reason: 'Provider unavailable: provider-0: cannot reach endpoint (ECONNREFUSED)' },
  });
  const entries = await all(c, 'context');
  assert.match(entries[0].content, /^\[digest of 2 entries, [^\]]+\]\n- hello\n- my name is Ada$/);
  assert.is(entries[0].metadata.digest.by, 'fallback');
  assertCleanStreams(c);
  assert.is(await c.end(), 0);
  const logs = stderrRecords(c.stderr());
  assert.ok(logs.some((l: any) => l.msg === 'memory embedding provider unavailable: full-text search only' && l.provider === 'provider-0'), c.stderr().slice(-2000));
  assert.ok(logs.some((l: any) => l.msg === 'memory summarize fell back to digests'), c.stderr().slice(-2000));
});

test.after(() => {
  for (const c of live) if (c.child.exitCode === null && c.child.signalCode === null) c.kill();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test.run();
