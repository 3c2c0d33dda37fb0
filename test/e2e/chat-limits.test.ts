// Provider `limits` (spec §5.2) in the running agent: `claw chat` on dist/claw.mjs against the fake HTTP
// model (test/helpers/fake-llm-server.ts). The provider unit tests (test/unit/provider-limits.test.ts)
// prove the rules; these prove the agent wires them: the daily ledger is fed by the usage numbers of real
// responses and survives a restart (file ledger without Memory, SQLite with it) → -32021 before anything
// is sent; tokens_per_request and requests_per_minute refuse without a request; max_context_window trims
// the conversation the agent sends, never sending more than the window allows.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openaiJson, deadUrl, type FakeLlm } from '../helpers/fake-llm-server.ts';
import { makeAgent, chat, openaiProvider, msg, useFakeLlm } from './chat-helpers.ts';
import { estimateText, MESSAGE_OVERHEAD_TOKENS } from '../../src/provider/tokens.ts';
import { OUTPUT_RESERVE_TOKENS } from '../../src/provider/limits.ts';

let llm: FakeLlm;
useFakeLlm(test, (l) => (llm = l), () => llm);

const today = () => new Date().toISOString().slice(0, 10);

for (const memory of [false, true]) {
  test(`tokens_per_day: real usage is charged, a second claw chat (restart) is refused with -32021 and sends nothing (${memory ? 'SQLite ledger' : 'file ledger'})`, async () => {
    const a = makeAgent({ providers: [openaiProvider(llm.url, { limits: { tokens_per_day: 20_000 } })], memory });
    llm.queue({ json: openaiJson({ content: msg('REPLY-1'), usage: [19_990, 20] }) });
    const r1 = await chat(a, ['PROMPT-1']);
    assert.is(r1.code, 0, r1.stderr);
    assert.is(r1.stdout, 'REPLY-1\n');
    assert.is(llm.requests.length, 1);
    const ledgerFile = join(a.dataDir, 'ledger', 'fake-openai.json');
    if (memory) assert.not.ok(existsSync(ledgerFile), 'with Memory the ledger lives in SQLite');
    else assert.equal(JSON.parse(readFileSync(ledgerFile, 'utf8')), { day: today(), tokens: 20_010 });

    const r2 = await chat(a, ['PROMPT-2']);
    // Piped, a last message without an answer is exit status 1.
    assert.is(r2.code, 1, r2.stderr);
    assert.is(r2.stdout, 'error: Provider quota exceeded: fake-openai: daily token quota reached (20010 of 20000) (-32021)\n');
    assert.is(llm.requests.length, 1, 'nothing was sent after the quota was reached');
  });
}

test('tokens_per_request: max_tokens capped to what the request leaves; an input that alone reaches it is refused unsent', async () => {
  const a = makeAgent({ providers: [openaiProvider(llm.url, { limits: { tokens_per_request: 30_000 } })], runtime: { agent: { native_tools: false } } });
  llm.queue({ json: openaiJson({ content: msg('REPLY-1') }) });
  const r = await chat(a, ['PROMPT-1']);
  assert.is(r.code, 0, r.stderr);
  assert.is(r.stdout, 'REPLY-1\n');
  const body = llm.requests[0]!.body;
  const input = body.messages.reduce((n: number, m: { content: string }) => n + MESSAGE_OVERHEAD_TOKENS + estimateText(m.content), 0);
  // min(4096 output ceiling, 30,000 − input)
  assert.is(body.max_tokens, Math.min(4096, 30_000 - input));

  const small = makeAgent({ providers: [openaiProvider(llm.url, { limits: { tokens_per_request: 50 } })] });
  llm.requests.length = 0;
  const r2 = await chat(small, ['PROMPT-2']);
  assert.is(r2.code, 1, r2.stderr);
  assert.match(r2.stdout, /^error: Provider quota exceeded: fake-openai: request input \(~\d+ tokens\) reaches tokens_per_request \(50\) \(-32021\)\n$/);
  assert.is(llm.requests.length, 0);
});

test('requests_per_minute 0: every request refused with -32021, none sent; a fallback still answers', async () => {
  const a = makeAgent({ providers: [openaiProvider(llm.url, { limits: { requests_per_minute: 0 } })] });
  const r = await chat(a, ['PROMPT-1']);
  assert.is(r.stdout, 'error: Provider quota exceeded: fake-openai: requests_per_minute is 0 (-32021)\n');
  assert.is(llm.requests.length, 0);

  const b = makeAgent({
    providers: [
      openaiProvider(llm.url, { limits: { requests_per_minute: 0 }, fallback: [{ provider_ref: 'offline' }] }),
      { name: 'offline', protocol: 'custom', endpoint: 'file:rules.yaml', model: 'rules', auth: { type: 'none' } },
    ],
    files: { 'rules.yaml': 'rules:\n  - match: "^PROMPT"\n    message: "OFFLINE answer"\n' },
  });
  const r2 = await chat(b, ['PROMPT-2']);
  assert.is(r2.stdout, 'OFFLINE answer\n');
  assert.is(llm.requests.length, 0);
});

test('max_context_window: the agent drops the oldest turns of its conversation to fit, keeps the system prompt and the current turn, caps max_tokens', async () => {
  const base = { providers: [openaiProvider(llm.url)], runtime: { agent: { native_tools: false } } };
  // The system prompt is fixed by the manifest: read it from one unlimited turn.
  llm.queue({ json: openaiJson({ content: msg('R0') }) });
  assert.is((await chat(makeAgent(base), ['hi'])).code, 0);
  const system = llm.requests[0]!.body.messages[0].content as string;
  const est = (s: string) => MESSAGE_OVERHEAD_TOKENS + estimateText(s);

  const u1 = 'A'.repeat(9000);
  const u2 = 'B'.repeat(9000);
  const u3 = 'PROMPT-3 short';
  // Room for system + the second exchange + the third question, not for the first exchange too.
  const budget = est(system) + est(u2) + est(msg('R2')) + est(u3);
  const window = budget + OUTPUT_RESERVE_TOKENS;
  assert.ok(window >= 4 * OUTPUT_RESERVE_TOKENS, 'the reserve is the full 1024 tokens at this size');
  const a = makeAgent({ ...base, providers: [openaiProvider(llm.url, { limits: { max_context_window: window } })] });
  llm.requests.length = 0;
  llm.queue({ json: openaiJson({ content: msg('R1') }) }, { json: openaiJson({ content: msg('R2') }) }, { json: openaiJson({ content: msg('R3') }) });
  const r = await chat(a, [u1, u2, u3]);
  assert.is(r.code, 0, r.stderr);
  assert.equal(r.replies, ['R1', 'R2', 'R3']);
  const sent = llm.requests.map((q) => (q.body.messages as { role: string; content: string }[]).map((m) => `${m.role}:${m.content.slice(0, 8)}`));
  assert.equal(sent, [
    ['system:' + system.slice(0, 8), 'user:AAAAAAAA'],
    // system + u1 + a1 + u2 is over the budget: the first exchange goes
    ['system:' + system.slice(0, 8), 'user:BBBBBBBB'],
    ['system:' + system.slice(0, 8), 'user:BBBBBBBB', `assistant:${msg('R2').slice(0, 8)}`, 'user:PROMPT-3'],
  ]);
  for (const q of llm.requests) {
    const input = (q.body.messages as { content: string }[]).reduce((n, m) => n + est(m.content), 0);
    assert.ok(input <= budget, `sent ${input} tokens, budget ${budget}`);
    assert.is(q.body.max_tokens, Math.min(4096, window - input));
  }
  assert.is(llm.requests[2]!.body.max_tokens, OUTPUT_RESERVE_TOKENS);
});

test('every provider failing: the turn says -32020 with one reason per provider and the server\'s own message (never the body), the chat goes on', async () => {
  const a = makeAgent({
    providers: [openaiProvider(llm.url, { fallback: [{ provider_ref: 'second' }] }), openaiProvider(await deadUrl(), { name: 'second' })],
  });
  llm.queue({ status: 500, json: { error: { type: 'server_error', message: 'BODY-TEXT from the server' }, other: 'OTHER-FIELD' } }, { json: openaiJson({ content: msg('REPLY-2') }) });
  const r = await chat(a, ['PROMPT-1', 'PROMPT-2']);
  assert.is(r.code, 0, r.stderr);
  assert.equal(r.replies.length, 2);
  assert.match(r.replies[0]!, /^error: Provider unavailable: fake-openai: HTTP 500 \(server_error\); second: .+ — fake-openai at http:\/\/127\.0\.0\.1:\d+\/v1 said "BODY-TEXT from the server" \(-32020\)$/);
  assert.not.ok(r.stdout.includes('OTHER-FIELD') || r.stderr.includes('OTHER-FIELD'), 'the rest of a response body is never shown or logged');
  assert.is(r.replies[1], 'REPLY-2');
});

test.run();
