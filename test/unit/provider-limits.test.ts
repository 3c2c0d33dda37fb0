// Provider `limits` (spec §5.2): tokens_per_day from a persisted ledger (TV-L2-10's -32021),
// tokens_per_request, requests_per_minute, max_context_window trimming — over real HTTP.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TokenLedger } from '../../src/kernel/ledger.ts';
import { createFileLedgerStore } from '../../src/node/ledger-file.ts';
import { systemClock } from '../../src/node/clock.ts';
import { createChain } from '../../src/provider/chain.ts';
import { createEmbeddingsClient } from '../../src/provider/embeddings.ts';
import { openaiJson, startFakeLlm, type FakeLlm } from '../helpers/fake-llm-server.ts';
import { FakeClock } from './helpers/fakes.ts';
import { assistant, prov, rejection, setup, signal, sys, user } from './provider-fixtures.ts';

let llm: FakeLlm;
test.before.each(async () => {
  llm = await startFakeLlm();
});
test.after.each(async () => {
  await llm.close();
});

const oa = (over: Record<string, unknown> = {}) => ({ protocol: 'openai-compatible', endpoint: llm.url, model: 'm', auth: { type: 'none' }, ...over });
const today = () => new Date().toISOString().slice(0, 10);

test('tokens_per_day: real usage persisted; after a restart the budget holds and is refused with -32021 before any request', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-prov-'));
  try {
    const boot = () => setup([prov('p', oa({ limits: { tokens_per_day: 100 } }))], { ledger: new TokenLedger(createFileLedgerStore(dir), systemClock) }).deps;
    llm.queue({ json: openaiJson({ content: 'a', usage: [60, 30] }) });
    await createChain(boot()).complete({ messages: [user('x')], signal: signal() });
    assert.is(llm.requests[0].body.max_tokens, 100 - 0 - 5); // "x" = 1 token + 4 framing
    // restart 1: 90 used; "x" (~5) fits, max_tokens capped to what remains
    llm.queue({ json: openaiJson({ content: 'b', usage: [5, 5] }) });
    await createChain(boot()).complete({ messages: [user('x')], signal: signal() });
    assert.is(llm.requests[1].body.max_tokens, 5);
    assert.equal(await createFileLedgerStore(dir).load('p'), { day: today(), tokens: 100 });
    // restart 2: spent
    const e = await rejection(createChain(boot()).complete({ messages: [user('x')], signal: signal() }));
    assert.is(e.code, -32021);
    assert.is(e.message, 'Provider quota exceeded: p: daily token quota reached (100 of 100)');
    assert.equal(e.data, { providers: [{ provider: 'p', reason: 'quota', message: 'p: daily token quota reached (100 of 100)', limit: 'tokens_per_day' }] });
    assert.is(llm.requests.length, 2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('tokens_per_day: a request whose input alone would cross the limit is refused', async () => {
  const { deps, store } = setup([prov('p', oa({ limits: { tokens_per_day: 50 } }))]);
  store.data.set('p', { day: today(), tokens: 40 });
  const e = await rejection(createChain(deps).complete({ messages: [user('y'.repeat(30))], signal: signal() }));
  assert.is(e.code, -32021);
  assert.is(e.data.providers[0].message, 'p: request (~14 tokens) would exceed the daily quota (40 of 50 used)');
  assert.is(llm.requests.length, 0);
});

test('quota on the primary moves to the fallback; -32021 only when every provider was refused by a quota', async () => {
  const providers = [prov('p', oa({ limits: { tokens_per_day: 10 }, fallback: [{ provider_ref: 'q' }] })), prov('q', oa({ limits: { tokens_per_day: 10 } }))];
  const { deps, store } = setup(providers);
  store.data.set('p', { day: today(), tokens: 10 });
  llm.queue({ json: openaiJson({ content: 'from q', usage: [1, 1] }) });
  assert.is((await createChain(deps).complete({ messages: [user('x')], signal: signal() })).provider, 'q');
  store.data.set('q', { day: today(), tokens: 10 });
  const e = await rejection(createChain(deps).complete({ messages: [user('x')], signal: signal() }));
  assert.is(e.code, -32021);
  assert.equal(e.data.providers.map((f: any) => f.provider), ['p', 'q']);
});

test('no usage in the response: the estimate is charged instead', async () => {
  llm.queue({ json: openaiJson({ content: 'abcdef' }) }); // 6 bytes → 2 tokens
  const { deps, store } = setup([prov('p', oa())]);
  await createChain(deps).complete({ messages: [user('x')], signal: signal() });
  assert.equal(store.data.get('p'), { day: today(), tokens: 5 + 2 });
});

test('tokens_per_request: max_tokens = limit − input estimate; refused when the input alone reaches it', async () => {
  llm.queue({ json: openaiJson({ content: 'ok', usage: [1, 1] }) });
  const { deps } = setup([prov('p', oa({ limits: { tokens_per_request: 20 } }))]);
  await createChain(deps).complete({ messages: [user('x')], signal: signal() });
  assert.is(llm.requests[0].body.max_tokens, 15);
  const e = await rejection(createChain(deps).complete({ messages: [user('z'.repeat(60))], signal: signal() }));
  assert.is(e.code, -32021);
  assert.is(e.data.providers[0].limit, 'tokens_per_request');
  assert.is(llm.requests.length, 1);
});

test('max_context_window: oldest history dropped first (tool results with their call), system and latest turn kept', async () => {
  llm.queue({ json: openaiJson({ content: 'ok', usage: [1, 1] }) });
  const t = (n: number) => 'w'.repeat(n * 3); // n tokens of text
  const messages = [
    sys(t(10)), // 14
    user(t(20)), // 24  dropped
    { role: 'assistant' as const, content: '', toolCall: { id: 'c1', name: 'e', arguments: '{}' } }, // 4+1+1 dropped with its result
    { role: 'tool' as const, content: t(5), toolCallId: 'c1' }, // 9 dropped
    assistant(t(6)), // 10 dropped: history must start with a user turn
    user(t(8)), // 12 kept
    assistant(t(8)), // 12 kept
    user(t(10)), // 14 latest user: kept
  ];
  // window 83 → budget 83 − min(1024, 20) = 63; total 101. Dropping the first user turn (77) and the
  // tool unit (62) fits, and then the assistant turn goes too, so the history starts with a user turn.
  const { deps } = setup([prov('p', oa({ limits: { max_context_window: 83 } }))]);
  await createChain(deps).complete({ messages, signal: signal() });
  const sent = llm.requests[0].body.messages;
  assert.equal(sent.map((m: any) => m.role), ['system', 'user', 'assistant', 'user']);
  assert.is(sent[1].content, t(8));
  assert.is(llm.requests[0].body.max_tokens, 83 - 52);
});

test('max_context_window: system prompt + latest user message alone too big → refused, nothing sent', async () => {
  const { deps } = setup([prov('p', oa({ limits: { max_context_window: 40 } }))]);
  const e = await rejection(createChain(deps).complete({ messages: [sys('s'.repeat(90)), user('u'.repeat(30))], signal: signal() }));
  assert.is(e.code, -32021);
  assert.is(e.data.providers[0].limit, 'max_context_window');
  assert.is(llm.requests.length, 0);
});

test('max_tokens never exceeds 4096, however large the window', async () => {
  llm.queue({ json: openaiJson({ content: 'ok', usage: [1, 1] }) });
  const { deps } = setup([prov('p', oa({ limits: { max_context_window: 200_000, tokens_per_request: 32_000 } }))]);
  await createChain(deps).complete({ messages: [user('x')], signal: signal() });
  assert.is(llm.requests[0].body.max_tokens, 4096);
});

/** A provider allowing 2 requests per minute, over a fake clock whose sleeps are recorded and skipped. */
function twoPerMinute() {
  const clock = new FakeClock();
  const waits: number[] = [];
  const { deps } = setup([prov('p', oa({ limits: { requests_per_minute: 2 } }))], {
    clock,
    sleep: async (ms) => {
      waits.push(ms);
      clock.advance(ms);
    },
  });
  return { clock, waits, deps };
}

test('requests_per_minute: the third request in a minute waits for the oldest to leave the window; 0 refuses', async () => {
  const { clock, waits, deps } = twoPerMinute();
  for (let i = 0; i < 3; i++) llm.queue({ json: openaiJson({ content: String(i), usage: [1, 1] }) });
  const chain = createChain(deps);
  await chain.complete({ messages: [user('x')], signal: signal() });
  clock.advance(10_000);
  await chain.complete({ messages: [user('x')], signal: signal() });
  clock.advance(5_000);
  await chain.complete({ messages: [user('x')], signal: signal() });
  assert.equal(waits, [45_000]);
  const z = setup([prov('p', oa({ limits: { requests_per_minute: 0 } }))]);
  const e = await rejection(createChain(z.deps).complete({ messages: [user('x')], signal: signal() }));
  assert.is(e.code, -32021);
  assert.is(e.data.providers[0].limit, 'requests_per_minute');
});

test('requests_per_minute: chat and memory embeddings over the same deps share one window per provider', async () => {
  const { clock, waits, deps } = twoPerMinute();
  llm.embeddings = (input) => input.map(() => [1, 0]);
  for (let i = 0; i < 2; i++) llm.queue({ json: openaiJson({ content: String(i), usage: [1, 1] }) });
  const chain = createChain(deps);
  const embed = createEmbeddingsClient(deps, deps.manifest.providers[0]!, { model: 'e', dimensions: 2 });
  await chain.complete({ messages: [user('x')], signal: signal() });
  clock.advance(20_000);
  await embed.embed(['a'], signal());
  assert.equal(waits, [], 'two requests fit in the minute');
  await chain.complete({ messages: [user('x')], signal: signal() });
  assert.equal(waits, [40_000], 'the third waits for the chat request to leave the window, embeddings counted');
});

test.run();
