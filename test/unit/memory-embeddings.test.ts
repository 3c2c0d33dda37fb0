// Issue 4: the embeddings client (src/provider/embeddings.ts) against the fake LLM server's /embeddings route, and
// a semantic store wired to it (src/runtime/store-providers.ts): hybrid search with reciprocal-rank fusion while the
// provider answers, full text with the reason when it does not, anthropic-native refused with a clear reason.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openDatabase } from '../../src/memory/sqlite/open.ts';
import { openMemoryStore, type StoreSpec } from '../../src/memory/stores/index.ts';
import { storeProviders, COOLDOWN_MS } from '../../src/runtime/store-providers.ts';
import { createEmbeddingsClient, embeddingsUrl, parseEmbeddings } from '../../src/provider/embeddings.ts';
import { ProviderFailure } from '../../src/provider/failure.ts';
import type { ProviderClient } from '../../src/kernel/ports.ts';
import { deadUrl, startFakeLlm, type FakeLlm } from '../helpers/fake-llm-server.ts';
import { SECRET, prov, rejection, setup } from './provider-fixtures.ts';
import { systemClock } from '../../src/node/clock.ts';
import { until } from './helpers/fakes.ts';

/** A 3-dimension "meaning" space: cat/feline → axis 0, food/prices → axis 1, dogs/bark → axis 2. */
const AXES: Record<string, number> = { cat: 0, feline: 0, food: 1, prices: 1, dogs: 2, bark: 2 };
function meaning(text: string): number[] {
  const v = [0, 0, 0];
  for (const w of text.toLowerCase().split(/\W+/)) if (w in AXES) v[AXES[w]] += 1;
  return v.every((x) => x === 0) ? [0.01, 0.01, 0.01] : v;
}

let fake: FakeLlm;
test.before.each(async () => {
  fake = await startFakeLlm();
  fake.embeddings = (input) => input.map(meaning);
});
test.after.each(async () => fake.close());

const openai = (endpoint: string, extra: Record<string, unknown> = {}) =>
  prov('embedder', { protocol: 'openai-compatible', endpoint, model: 'chat-model', auth: { type: 'bearer', secret_ref: 'LLM_KEY' }, ...extra });

test('embeddings client: POST {endpoint}/embeddings with the store model, vectors in index order, usage charged to the ledger', async () => {
  const p = openai(`${fake.url}/v1`);
  const { deps } = setup([p]);
  const c = createEmbeddingsClient(deps, p, { model: 'nomic-embed-text', dimensions: 3 });
  const v = await c.embed(['the feline rests', 'cat food prices']);
  assert.equal(v, [[1, 0, 0], [1, 2, 0]]);
  assert.is(fake.requests.length, 1);
  const r = fake.requests[0];
  assert.is(r.url, '/v1/embeddings');
  assert.equal(r.body, { model: 'nomic-embed-text', input: ['the feline rests', 'cat food prices'] });
  assert.is(r.headers.authorization, `Bearer ${SECRET}`);
  // usage.total_tokens of the fake = the inputs' word count (3 + 3).
  assert.is(await deps.ledger.usedToday('embedder'), 6);
  assert.is(embeddingsUrl('http://h/v1/embeddings/'), 'http://h/v1/embeddings');
});

test('embeddings client: a vector of the wrong size is a malformed reply naming both sizes; 503 is retried', async () => {
  const p = openai(fake.url);
  const { deps, sleeps } = setup([p]);
  const e = await rejection(createEmbeddingsClient(deps, p, { model: 'm', dimensions: 4 }).embed(['cat']));
  assert.instance(e, ProviderFailure);
  assert.is(e.reason, 'malformed');
  assert.is(e.message, 'embedder: malformed response: embeddings reply: vector of 3 dimensions, the store declares 4');
  let calls = 0;
  fake.embeddings = (input) => (++calls === 1 ? { status: 503, json: { error: { type: 'overloaded' } } } : input.map(meaning));
  assert.equal(await createEmbeddingsClient(deps, p, { model: 'm', dimensions: 3 }).embed(['dogs']), [[0, 0, 1]]);
  assert.is(calls, 2);
  assert.equal(sleeps, [750]); // backoff of retry 0: 1000 ms with equal jitter at random 0.5
});

test('embeddings client: reply order follows data[].index; a quota already spent is refused before sending', async () => {
  assert.equal(parseEmbeddings(JSON.stringify({ data: [{ index: 1, embedding: [2] }, { index: 0, embedding: [1] }] }), 2, 1), { vectors: [[1], [2]], tokens: undefined });
  const p = openai(fake.url, { limits: { tokens_per_day: 5 } });
  const { deps } = setup([p]);
  await deps.ledger.record('embedder', 5);
  const e = await rejection(createEmbeddingsClient(deps, p, { model: 'm', dimensions: 3 }).embed(['cat']));
  assert.is(e.reason, 'quota');
  assert.is(fake.requests.length, 0);
});

test('embeddings client: anthropic-native has no embeddings API, said without sending anything', async () => {
  const p = prov('claude', { protocol: 'anthropic-native', endpoint: fake.url, model: 'claude-x', auth: { type: 'bearer', secret_ref: 'LLM_KEY' } });
  const { deps } = setup([p]);
  const e = await rejection(createEmbeddingsClient(deps, p, { model: 'm', dimensions: 3 }).embed(['cat']));
  assert.is(e.reason, 'config');
  assert.match(e.message, /^claude: protocol anthropic-native has no embeddings API \(Anthropic offers none\)/);
  assert.is(fake.requests.length, 0);
});

const DOCS = ['the feline rests on the mat', 'cat food prices', 'dogs bark'];
const semanticSpec = (ref: string, extra: Partial<StoreSpec> = {}) =>
  ({ name: 'notes', type: 'semantic', embedding: { provider_ref: ref, model: 'nomic-embed-text', dimensions: 3 }, ...extra }) as StoreSpec;
const noChat: ProviderClient = { complete: async () => assert.unreachable('no chat call expected') as never };

async function semanticStore(providerEndpoint: string, opts: { retry?: unknown; protocol?: string; clock?: { t: number } } = {}) {
  const p = prov('embedder', {
    protocol: opts.protocol ?? 'openai-compatible',
    endpoint: providerEndpoint,
    model: 'chat',
    auth: { type: 'none' },
    ...(opts.retry ? { retry: opts.retry } : {}),
  });
  const { deps, log } = setup([p]);
  const clock = opts.clock ?? { t: 0 };
  const spec = semanticSpec('embedder');
  const extra = storeProviders({ manifest: deps.manifest, deps, chat: () => noChat, log, signal: new AbortController().signal, monotonic: () => clock.t })(spec);
  const db = await openDatabase({ adapter: 'sqljs' });
  let n = 0;
  const s = openMemoryStore(spec, { db, ...extra, newId: () => `e${++n}`, ownsDatabase: true });
  return { s, log, deps, clock, db };
}

test('semantic store + embedding provider: hybrid RRF ranks with both signals (full text alone finds one entry)', async () => {
  const { s, deps } = await semanticStore(fake.url);
  await s.store(DOCS.map((content) => ({ content })));
  const r = await s.query({ type: 'semantic', text: 'cat' });
  assert.is(r.search, 'hybrid');
  assert.is(r.fallback, undefined);
  // Full text: only e2 contains "cat". Vectors: e1 (cos 1), e2 (cos 1/√5), e3 (cos 0). RRF Σ1/(60+rank) ÷ 2/61.
  assert.equal(
    r.entries.map((e) => [e.id, e.score]),
    [
      ['e2', ((1 / 61 + 1 / 62) * 61) / 2],
      ['e1', ((1 / 61) * 61) / 2],
      ['e3', ((1 / 63) * 61) / 2],
    ],
  );
  assert.equal(fake.requests.map((q) => q.body.input), [DOCS, ['cat']]);
  // 3 entries stored (6 + 3 + 2 words) + the query (1 word): all charged to the embedding provider.
  assert.is(await deps.ledger.usedToday('embedder'), 12);
  await s.close();
});

test('semantic store + provider down: store keeps the entries, query is full text with the reason; cooldown then retry', async () => {
  const dead = await deadUrl();
  const { s, log, clock } = await semanticStore(dead, { retry: { max_attempts: 1 } });
  assert.equal(await s.store(DOCS.map((content) => ({ content }))), ['e1', 'e2', 'e3']);
  const r = await s.query({ type: 'semantic', text: 'cat' });
  assert.is(r.search, 'fts');
  assert.equal(r.entries.map((e) => e.id), ['e2']);
  assert.is(r.fallback, 'embedding provider "embedder" did not answer (embedder: cannot reach endpoint (ECONNREFUSED)); full-text search only');
  // Logged once (not per call) while the provider is in its cooldown.
  assert.is(log.entries.filter((e) => e.msg === 'memory embedding provider unavailable: full-text search only').length, 1);
  clock.t += COOLDOWN_MS + 1;
  const again = await s.query({ type: 'semantic', text: 'cat' });
  assert.is(again.search, 'fts');
  assert.is(log.entries.filter((e) => e.msg === 'memory embedding provider unavailable: full-text search only').length, 2);
  await s.close();
});

test('semantic store + anthropic-native embedding provider: full text, the reason names the missing API', async () => {
  const { s } = await semanticStore(fake.url, { protocol: 'anthropic-native' });
  await s.store(DOCS.map((content) => ({ content })));
  const r = await s.query({ type: 'semantic', text: 'cat' });
  assert.is(r.search, 'fts');
  assert.match(r.fallback!, /^embedding provider "embedder" did not answer \(embedder: protocol anthropic-native has no embeddings API/);
  assert.is(fake.requests.length, 0);
  await s.close();
});

test('two stores on one embedding provider share its requests_per_minute window', async () => {
  let t = 0;
  const waits: number[] = [];
  const p = openai(fake.url, { limits: { requests_per_minute: 2 } });
  const { deps, log } = setup([p], {
    clock: { ...systemClock, monotonic: () => t },
    sleep: async (ms) => {
      waits.push(ms);
      t += ms;
    },
  });
  const make = storeProviders({ manifest: deps.manifest, deps, chat: () => noChat, log, signal: new AbortController().signal, monotonic: () => t });
  const db = await openDatabase({ adapter: 'sqljs' });
  const a = openMemoryStore({ ...semanticSpec('embedder'), name: 'a' } as StoreSpec, { db, ...make({ ...semanticSpec('embedder'), name: 'a' } as StoreSpec) });
  const b = openMemoryStore({ ...semanticSpec('embedder'), name: 'b' } as StoreSpec, { db, ...make({ ...semanticSpec('embedder'), name: 'b' } as StoreSpec) });
  await a.store([{ content: 'cat' }]);
  t += 1000;
  await b.store([{ content: 'dogs' }]);
  // The third request in the minute waits until the first leaves the window (60 000 − 1000 ms later).
  assert.is((await b.query({ type: 'semantic', text: 'cat' })).search, 'hybrid');
  assert.equal(waits, [59_000]);
  assert.is(fake.requests.length, 3);
  db.close();
});

test('semantic store whose provider_ref names no Provider: full text, the reason says so', async () => {
  const p = openai(fake.url);
  const { deps, log } = setup([p]);
  const spec = semanticSpec('nope');
  const extra = storeProviders({ manifest: deps.manifest, deps, chat: () => noChat, log, signal: new AbortController().signal, monotonic: () => 0 })(spec);
  const s = openMemoryStore(spec, { db: await openDatabase({ adapter: 'sqljs' }), ...extra, ownsDatabase: true });
  await s.store([{ content: 'cat food' }]);
  const r = await s.query({ type: 'semantic', text: 'cat' });
  assert.is(r.search, 'fts');
  assert.is(r.fallback, "embedding provider \"nope\" did not answer (no Provider named 'nope' (declared: embedder)); full-text search only");
  await s.close();
});

test('entries stored while the provider failed get their vectors in the background once it answers again', async () => {
  const clock = { t: 0 };
  const { s, db } = await semanticStore(fake.url, { retry: { max_attempts: 1 }, clock });
  let up = false;
  fake.embeddings = (input) => (up ? input.map(meaning) : { status: 503, json: { error: { type: 'overloaded' } } });
  assert.equal(await s.store(DOCS.map((content) => ({ content }))), ['e1', 'e2', 'e3']);
  const vectors = () => (db.prepare('SELECT count(*) AS n FROM claw_memory_vectors').get() as { n: number }).n;
  assert.is(vectors(), 0, 'stored without vectors');
  up = true;
  clock.t += COOLDOWN_MS + 1;
  const r = await s.query({ type: 'semantic', text: 'cat' });
  assert.is(r.search, 'hybrid');
  await until(() => vectors() === 3, 3000);
  // The backfilled vectors rank: the same query now gives the hybrid order of a store that never missed them.
  const again = await s.query({ type: 'semantic', text: 'cat' });
  assert.equal(again.entries.map((e) => e.id), ['e2', 'e1', 'e3']);
  await s.close();
});

test('a backfill batch the provider refuses is not sent again on every call (it waits, 1 min doubling)', async () => {
  const clock = { t: 0 };
  const { s } = await semanticStore(fake.url, { retry: { max_attempts: 1 }, clock });
  let up = false;
  // Once up, the provider answers single texts (queries) but refuses the 3-entry backlog.
  fake.embeddings = (input) => (up && input.length === 1 ? input.map(meaning) : { status: 400, json: { error: { type: 'too_large' } } });
  await s.store(DOCS.map((content) => ({ content })));
  up = true;
  clock.t += COOLDOWN_MS + 1;
  const batches = () => fake.requests.filter((q) => q.body.input.length === 3).length;
  const before = batches();
  await s.query({ type: 'semantic', text: 'cat' });
  await until(() => batches() === before + 1, 3000);
  await new Promise((r) => setTimeout(r, 50));
  clock.t += COOLDOWN_MS + 1; // the refused batch also put the provider in its 30 s cooldown (store-providers.ts)
  for (let i = 0; i < 3; i++) assert.is((await s.query({ type: 'semantic', text: 'dog' })).search, 'hybrid');
  await new Promise((r) => setTimeout(r, 50));
  assert.is(batches(), before + 1, 'no second attempt within the pause');
  await s.close();
});

test('the backfill pause ends by the monotonic clock (the wall clock may have stepped back meanwhile)', async () => {
  const clock = { t: 0 };
  const { s } = await semanticStore(fake.url, { retry: { max_attempts: 1 }, clock });
  let up = false;
  let refuse = true;
  fake.embeddings = (input) => (up && (input.length === 1 || !refuse) ? input.map(meaning) : { status: 400, json: { error: { type: 'too_large' } } });
  await s.store(DOCS.map((content) => ({ content }))); // stored without vectors
  up = true;
  clock.t += COOLDOWN_MS + 1;
  const batches = () => fake.requests.filter((q) => q.body.input.length === 3).length;
  const before = batches();
  await s.query({ type: 'semantic', text: 'cat' }); // the backfill batch is refused: paused 1 min
  await until(() => batches() === before + 1, 3000);
  await new Promise((r) => setTimeout(r, 50));
  refuse = false;
  clock.t += 61_000 + COOLDOWN_MS; // a minute and the provider's cooldown pass on the monotonic clock
  await s.query({ type: 'semantic', text: 'cat' });
  await until(() => batches() === before + 2, 3000);
  await s.close();
});

test.run();
