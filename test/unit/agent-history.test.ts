// The agent's conversation history over a conversation store (src/agent/history.ts, docs/agent.md
// "History and memory"): stored with tags, resumed by tags, partitioned when the store is scoped.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryHistory, historyScope, MAX_HISTORY_MESSAGES, RESUME_MESSAGES, type ConversationStoreLike } from '../../src/agent/history.ts';
import { makeManifest, primitive } from './helpers/fakes.ts';

/** A store like src/memory/stores/conversation.ts: time-range keeps the most recent top_k, oldest first; scoped stores need ctx.scope. */
function fakeStore(scoped = false) {
  const rows: { scope: string; content: string; metadata?: Record<string, unknown> }[] = [];
  const scopeOf = (ctx?: { scope?: string }) => {
    if (!scoped) return '';
    if (!ctx?.scope) throw new Error('a scope value is required');
    return ctx.scope;
  };
  const store: ConversationStoreLike = {
    async store(entries, ctx) {
      const scope = scopeOf(ctx);
      for (const e of entries) rows.push({ scope, ...e });
      return entries.map(() => 'id');
    },
    async query(q, ctx) {
      const scope = scopeOf(ctx);
      const mine = rows.filter((r) => r.scope === scope);
      return { entries: mine.slice(-(q.top_k ?? mine.length)) };
    },
  };
  return { store, rows };
}

test('turns are stored with the tags and the role, and resumed in order by a new history', async () => {
  const { store, rows } = fakeStore();
  const h = new MemoryHistory(store, { channel: 'cli', user: 'ada' });
  await h.append({ role: 'user', content: 'hi' });
  await h.append({ role: 'assistant', content: '{"message":{"content":"hello"}}' });
  await h.append({ role: 'tool', content: '{"tool_result":{}}' });
  assert.equal(rows[0], { scope: '', content: 'hi', metadata: { channel: 'cli', user: 'ada', role: 'user' } });
  const again = new MemoryHistory(store, { channel: 'cli', user: 'ada' });
  assert.is(await again.resume(), 3);
  assert.equal(again.messages(), h.messages());
});

test("one user never resumes another user's turns from a shared store", async () => {
  const { store } = fakeStore();
  const ada = new MemoryHistory(store, { channel: 'queue', user: 'ada' });
  const bob = new MemoryHistory(store, { channel: 'queue', user: 'bob' });
  await ada.append({ role: 'user', content: 'my secret is 42' });
  await bob.append({ role: 'user', content: 'hello' });
  const bob2 = new MemoryHistory(store, { channel: 'queue', user: 'bob' });
  await bob2.resume();
  assert.equal(bob2.messages(), [{ role: 'user', content: 'hello' }]);
  // Entries without a role (written by something else) are not conversation turns.
  await store.store([{ content: 'note', metadata: { channel: 'queue', user: 'bob' } }]);
  const bob3 = new MemoryHistory(store, { channel: 'queue', user: 'bob' });
  assert.is(await bob3.resume(), 1);
});

test('resume keeps the most recent RESUME_MESSAGES of this history, even among many of others', async () => {
  const { store } = fakeStore();
  const ada = new MemoryHistory(store, { user: 'ada' });
  const bob = new MemoryHistory(store, { user: 'bob' });
  for (let i = 0; i < 60; i++) await ada.append({ role: 'user', content: `a${i}` });
  for (let i = 0; i < 100; i++) await bob.append({ role: 'user', content: `b${i}` });
  const again = new MemoryHistory(store, { user: 'ada' });
  assert.is(await again.resume(), RESUME_MESSAGES);
  assert.equal(again.messages()[0], { role: 'user', content: `a${60 - RESUME_MESSAGES}` });
  assert.equal(again.messages().at(-1), { role: 'user', content: 'a59' });
});

test('a scoped store gets the partition on every call; without it the store refuses', async () => {
  const { store, rows } = fakeStore(true);
  const refused = await new MemoryHistory(store, {}).resume().then(() => 'resolved', (e: Error) => e.message);
  assert.is(refused, 'a scope value is required');
  const h = new MemoryHistory(store, { user: 'ada' }, 'terminal');
  assert.is(await h.resume(), 0);
  await h.append({ role: 'user', content: 'hi' });
  assert.is(rows[0]!.scope, 'terminal');
  assert.is(await new MemoryHistory(store, { user: 'ada' }, 'other').resume(), 0);
  assert.is(await new MemoryHistory(store, { user: 'ada' }, 'terminal').resume(), 1);
});

test('historyScope: the identity for per-identity, the channel for per-channel, none for global', () => {
  const withScope = (scope?: string) =>
    makeManifest(3, {
      identity: primitive('Identity', 'helper'),
      memory: primitive('Memory', 'mem', { stores: [{ name: 'kv', type: 'key-value', scope: 'per-identity' }, { name: 'conversation', type: 'conversation', ...(scope ? { scope } : {}) }] }),
    });
  assert.is(historyScope(withScope('per-identity'), 'terminal'), 'helper');
  assert.is(historyScope(withScope('per-channel'), 'terminal'), 'terminal');
  assert.is(historyScope(withScope('global'), 'terminal'), undefined);
  assert.is(historyScope(withScope(), 'terminal'), undefined);
  assert.is(historyScope(makeManifest(2), 'terminal'), undefined);
});

test('the in-memory conversation is bounded: oldest first, cut at a user message; the store keeps all', async () => {
  const { store, rows } = fakeStore();
  const h = new MemoryHistory(store, {}, undefined, 6);
  const turn = async (i: number) => {
    await h.append({ role: 'user', content: `u${i}` });
    await h.append({ role: 'assistant', content: `call${i}` });
    await h.append({ role: 'tool', content: `result${i}` });
    await h.append({ role: 'assistant', content: `answer${i}` });
  };
  await turn(1);
  await turn(2);
  assert.equal(h.messages().map((m) => m.content), ['u2', 'call2', 'result2', 'answer2']);
  await h.append({ role: 'user', content: 'u3' });
  await h.append({ role: 'assistant', content: 'call3' });
  await h.append({ role: 'tool', content: 'result3' });
  // Over 6: the cut moves forward to the next user message (u3); the current turn is never cut.
  assert.equal(h.messages().map((m) => m.content), ['u3', 'call3', 'result3']);
  assert.is(rows.length, 11);
  assert.is(MAX_HISTORY_MESSAGES, 200);
  const big = new MemoryHistory(undefined, {});
  for (let i = 0; i < 500; i++) await big.append({ role: i % 2 ? 'assistant' : 'user', content: String(i) });
  assert.is(big.messages().length, 200);
  assert.is(big.messages()[0]!.role, 'user');
});

test.run();
