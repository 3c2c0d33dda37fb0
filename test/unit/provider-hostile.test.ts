// A model server that lies or misbehaves, over real HTTP (test/helpers/fake-llm-server.ts): what it says
// about itself (usage numbers, headers) must not outlast the answer or take the runtime's limits with it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TokenLedger } from '../../src/kernel/ledger.ts';
import { createFileLedgerStore } from '../../src/node/ledger-file.ts';
import { systemClock } from '../../src/node/clock.ts';
import { createChain } from '../../src/provider/chain.ts';
import { createEmbeddingsClient } from '../../src/provider/embeddings.ts';
import { SseParser } from '../../src/protocol/sse.ts';
import { anthropicBodyText, sseData, sseEvent, startFakeLlm, type FakeLlm } from '../helpers/fake-llm-server.ts';
import { SECRET, prov, rejection, setup, signal, user } from './provider-fixtures.ts';

let llm: FakeLlm;
test.before.each(async () => {
  llm = await startFakeLlm();
});
test.after.each(async () => {
  await llm.close();
});

const oa = () => ({ protocol: 'openai-compatible', endpoint: llm.url, model: 'm', auth: { type: 'none' }, limits: { tokens_per_day: 100_000 } });
const an = () => ({ protocol: 'anthropic-native', endpoint: llm.url, model: 'm', auth: { type: 'none' }, limits: { tokens_per_day: 100_000 } });

test('usage numbers no model reports (1e308, a sum that overflows to Infinity) are not charged as such: the persisted ledger stays readable and the next turn goes out', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-prov-hostile-'));
  try {
    const huge = { choices: [{ index: 0, message: { role: 'assistant', content: 'a' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1e308, completion_tokens: 1e308 } };
    const ok = { choices: [{ index: 0, message: { role: 'assistant', content: 'b' }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 2 } };
    const huge2 = '{"type":"message","role":"assistant","content":[{"type":"text","text":"c"}],"usage":{"input_tokens":1e308,"cache_read_input_tokens":1e308,"output_tokens":1}}';
    for (const [spec, first, second] of [
      [oa(), { json: huge }, { json: ok }],
      [an(), { body: huge2 }, { body: anthropicBodyText({ text: 'd', usage: [3, 2] }) }],
    ] as const) {
      rmSync(join(dir, 'ledger'), { recursive: true, force: true });
      const deps = () => setup([prov('p', spec)], { ledger: new TokenLedger(createFileLedgerStore(dir), systemClock) }).deps;
      llm.queue(first);
      const r = await createChain(deps()).complete({ messages: [user('x')], signal: signal() });
      assert.ok(!r.usage || r.usage.input_tokens + r.usage.output_tokens <= 2, `a count past any model is no count: ${JSON.stringify(r.usage)}`);
      const saved = await createFileLedgerStore(dir).load('p');
      assert.ok(saved && Number.isFinite(saved.tokens) && saved.tokens < 100, JSON.stringify(saved));
      llm.queue(second);
      const next = await createChain(deps()).complete({ messages: [user('x')], signal: signal() });
      assert.equal(next.usage, { input_tokens: 3, output_tokens: 2 });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('embeddings: a usage of 1e308 twice does not overflow the file ledger into a value it cannot read back', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-prov-hostile-'));
  try {
    const { deps } = setup([prov('p', oa())], { ledger: new TokenLedger(createFileLedgerStore(dir), systemClock) });
    const embed = createEmbeddingsClient(deps, deps.manifest.providers[0]!, { model: 'e', dimensions: 2 });
    llm.embeddings = () => ({ json: { object: 'list', data: [{ index: 0, embedding: [1, 0] }], usage: { prompt_tokens: 1e308, total_tokens: 1e308 } } });
    await embed.embed(['a'], signal());
    await embed.embed(['a'], signal());
    const saved = await createFileLedgerStore(dir).load('p');
    assert.ok(saved && saved.tokens < 100, JSON.stringify(saved));
    llm.embeddings = undefined;
    llm.queue({ json: { choices: [{ index: 0, message: { role: 'assistant', content: 'ok' } }] } });
    assert.is((await createChain(deps).complete({ messages: [user('x')], signal: signal() })).text, 'ok');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a stream that drips a character of content forever ends at attempt_deadline_ms over real HTTP, and its socket is closed', async () => {
  let closed = false;
  let timer: ReturnType<typeof setInterval> | undefined;
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: {"choices":[{"index":0,"delta":{"content":"');
    timer = setInterval(() => res.write('a'), 10);
    res.on('close', () => ((closed = true), clearInterval(timer)));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const { deps } = setup([prov('p', { protocol: 'openai-compatible', endpoint: url, model: 'm', auth: { type: 'none' }, streaming: true, retry: { max_attempts: 1 } })], { timeouts: { p: { timeoutMs: 200, attemptDeadlineMs: 400 } } });
    const started = performance.now();
    const e = await rejection(createChain(deps).complete({ messages: [user('x')], signal: signal() }));
    assert.match(e.message, /attempt not finished within 400 ms/);
    assert.ok(performance.now() - started < 1500);
    for (let i = 0; i < 50 && !closed; i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(closed, 'the server saw the connection go');
  } finally {
    clearInterval(timer);
    server.closeAllConnections?.();
    await new Promise((r) => server.close(r));
  }
});

test('an API key echoed back as the error type or code (4xx, a 200 error object, a stream error event) reaches no error message or data', async () => {
  const SHORT = 'hunter2hunter2';
  const cases: [Record<string, unknown>, string, unknown[]][] = [
    [{ protocol: 'openai-compatible', auth: { type: 'bearer', secret_ref: 'LLM_KEY' } }, SECRET, [{ status: 400, json: { error: { code: SECRET, message: 'bad' } } }]],
    [{ protocol: 'openai-compatible', auth: { type: 'bearer', secret_ref: 'LLM_KEY' } }, SECRET, [{ status: 404, json: { type: SECRET, message: `no such key ${SECRET}` } }]],
    [{ protocol: 'openai-compatible', auth: { type: 'api-key-header', secret_ref: 'SHORT_KEY' } }, SHORT, [{ status: 400, json: { error: { type: SHORT, message: `key ${SHORT} is not valid here` } } }]],
    [{ protocol: 'openai-compatible', auth: { type: 'bearer', secret_ref: 'LLM_KEY' } }, SECRET, [1, 2, 3].map(() => ({ json: { error: { type: SECRET } } }))],
    [{ protocol: 'openai-compatible', streaming: true, auth: { type: 'bearer', secret_ref: 'LLM_KEY' } }, SECRET, [1, 2, 3].map(() => ({ sse: [sseData({ error: { code: SECRET } })] }))],
    [{ protocol: 'anthropic-native', streaming: true, auth: { type: 'api-key-header', secret_ref: 'LLM_KEY' } }, SECRET, [1, 2, 3].map(() => ({ sse: [sseEvent('error', { type: 'error', error: { type: SECRET } })] }))],
  ];
  for (const [over, key, steps] of cases) {
    llm.queue(...(steps as any[]));
    const { deps } = setup([prov('cloud', { endpoint: llm.url, model: 'm', ...over })], {});
    (deps as any).secrets = { resolve: async (ref: string) => (ref === 'SHORT_KEY' ? SHORT : SECRET) };
    const e = await rejection(createChain(deps).complete({ messages: [user('x')], signal: signal() }));
    assert.is(e.code, -32020, e.message);
    const all = JSON.stringify({ message: e.message, data: e.data });
    assert.not.ok(all.includes(key), all);
    assert.is(llm.pending, 0);
  }
});

test('JSON nested a million deep (a stream event, a whole body) is malformed before it is parsed, not seconds of blocked event loop', async () => {
  const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
  const chunk = (content: string) => `data: {"choices":[{"index":0,"delta":{"content":${content}},"finish_reason":null}]}\n\n`;
  const end = [sseData({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }), sseData('[DONE]')];
  const cases: [Record<string, unknown>, any][] = [
    [{ protocol: 'openai-compatible', streaming: true }, { sse: [chunk(deep(1_500_000)), ...end] }],
    [{ protocol: 'openai-compatible' }, { body: `{"choices":[{"index":0,"message":{"role":"assistant","content":"hi","x":${deep(1_500_000)}}}]}` }],
    [{ protocol: 'anthropic-native', streaming: true }, { sse: [`event: message_start\ndata: {"type":"message_start","message":{"usage":${deep(1_500_000)}}}\n\n`] }],
    [{ protocol: 'anthropic-native' }, { body: `{"type":"message","content":[{"type":"text","text":"hi","x":${deep(1_500_000)}}]}` }],
  ];
  for (const [over, step] of cases) {
    llm.queue(step);
    const { deps } = setup([prov('p', { endpoint: llm.url, model: 'm', auth: { type: 'none' }, ...over })]);
    const started = performance.now();
    const e = await rejection(createChain(deps).complete({ messages: [user('x')], signal: signal() }));
    assert.match(e.message, /malformed response: .*not JSON/, JSON.stringify(over));
    const ms = performance.now() - started;
    assert.ok(ms < 400, `${Math.round(ms)} ms`);
  }
  // Depth the validator itself accepts (1000) still parses.
  llm.queue({ json: { choices: [{ index: 0, message: { role: 'assistant', content: 'ok', x: JSON.parse(deep(1000)) } }] } });
  const { deps } = setup([prov('p', { protocol: 'openai-compatible', endpoint: llm.url, model: 'm', auth: { type: 'none' } })]);
  assert.is((await createChain(deps).complete({ messages: [user('x')], signal: signal() })).text, 'ok');
});

test('a long data line trickled in small chunks costs linear time: the idle check asked after every chunk does not re-read the line so far', () => {
  // client.ts asks `dataChars` after every chunk. Read off the open line (a rope of every chunk so far), it
  // flattened the line each time: a 250,000-character line in 16-byte chunks took 6 s of event loop, 1 MB 137 s; now 4 MB take ~160 ms.
  const p = new SseParser(4 * 1024 * 1024);
  const started = performance.now();
  p.push('data: ');
  const piece = 'y'.repeat(16);
  let seen = 0;
  for (let i = 0; i < 200_000 / 16; i++) {
    p.push(piece);
    seen = p.dataChars;
  }
  assert.is(seen, 200_000);
  const ms = performance.now() - started;
  assert.ok(ms < 400, `${Math.round(ms)} ms`);
  // The count is the one it was: the value of the open data line, its optional space left out, as it grows.
  const q = new SseParser();
  const counts = ['da', 'ta', ':', ' ', 'ab', 'c\n', ': ping', '\n', 'data:x', 'y\n\n', 'event: e'].map((c) => (q.push(c), q.dataChars));
  assert.equal(counts, [0, 0, 0, 0, 2, 3, 3, 3, 4, 5, 5]);
});

test.run();
