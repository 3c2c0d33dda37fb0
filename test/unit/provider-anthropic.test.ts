// anthropic-native client against a real HTTP server (test/helpers/fake-llm-server.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createChain } from '../../src/provider/chain.ts';
import { anthropicBodyText, anthropicSse, sseEvent, startFakeLlm, type FakeLlm } from '../helpers/fake-llm-server.ts';
import { SECRET, assistant, prov, rejection, setup, signal, sys, user } from './provider-fixtures.ts';

let llm: FakeLlm;
test.before.each(async () => {
  llm = await startFakeLlm();
});
test.after.each(async () => {
  await llm.close();
});

const spec = (over: Record<string, unknown> = {}) => ({
  protocol: 'anthropic-native',
  endpoint: llm.url,
  model: 'claude-x',
  auth: { type: 'api-key-header', secret_ref: 'LLM_KEY' },
  ...over,
});

test('plain: URL, headers, system split out, turns merged, default max_tokens, text and usage', async () => {
  llm.queue({ body: anthropicBodyText({ text: 'hi there', usage: [20, 4] }) });
  const { deps } = setup([prov('claude', spec())]);
  const r = await createChain(deps).complete({ messages: [sys('a'), sys('b'), user('one'), user('two'), assistant('ok'), user('three')], signal: signal() });
  assert.equal(r, { text: 'hi there', toolCallCount: 0, usage: { input_tokens: 20, output_tokens: 4 }, provider: 'claude', model: 'claude-x' });
  const q = llm.requests[0];
  assert.is(q.url, '/v1/messages');
  assert.is(q.headers['x-api-key'], SECRET);
  assert.is(q.headers['anthropic-version'], '2023-06-01');
  assert.equal(q.body, {
    model: 'claude-x',
    max_tokens: 4096,
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'one' }, { type: 'text', text: 'two' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
      { role: 'user', content: [{ type: 'text', text: 'three' }] },
    ],
    stream: false,
    system: 'a\n\nb',
  });
});

test('endpoint ending in /v1 gets /messages; bearer auth sends Authorization', async () => {
  llm.queue({ body: anthropicBodyText({ text: 'x' }) });
  const { deps } = setup([prov('claude', spec({ endpoint: `${llm.url}/v1/`, auth: { type: 'bearer', secret_ref: 'LLM_KEY' } }))]);
  await createChain(deps).complete({ messages: [user('x')], signal: signal() });
  assert.is(llm.requests[0].url, '/v1/messages');
  assert.is(llm.requests[0].headers.authorization, `Bearer ${SECRET}`);
  assert.is(llm.requests[0].headers['x-api-key'], undefined);
});

test('tool_use: input raw text exactly as sent (duplicate keys, spacing, escapes), tools and tool_choice sent', async () => {
  const inputRaw = '{ "path" : "a\\u0041", "path":"b", "n": 1e2 }';
  llm.queue({ body: anthropicBodyText({ text: 'let me', tool: { id: 'toolu_1', name: 'file-read', inputRaw }, usage: [9, 9] }) });
  const { deps } = setup([prov('claude', spec())]);
  const r = await createChain(deps).complete({ messages: [user('x')], tools: [{ name: 'file-read', input_schema: { type: 'object' } }], signal: signal() });
  assert.equal(r.toolCall, { id: 'toolu_1', name: 'file-read', arguments: inputRaw });
  assert.is(r.text, 'let me');
  assert.is(r.toolCallCount, 1);
  assert.equal(llm.requests[0].body.tools, [{ name: 'file-read', input_schema: { type: 'object' } }]);
  assert.equal(llm.requests[0].body.tool_choice, { type: 'auto', disable_parallel_tool_use: true });
});

test('tool exchange goes back as tool_use / tool_result blocks', async () => {
  llm.queue({ body: anthropicBodyText({ text: 'done' }) });
  const { deps } = setup([prov('claude', spec())]);
  await createChain(deps).complete({
    messages: [user('q'), { role: 'assistant', content: '', toolCall: { id: 'toolu_1', name: 'echo', arguments: '{"t":1}' } }, { role: 'tool', content: 'res', toolCallId: 'toolu_1' }],
    signal: signal(),
  });
  assert.equal(llm.requests[0].body.messages, [
    { role: 'user', content: [{ type: 'text', text: 'q' }] },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'echo', input: { t: 1 } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'res' }] },
  ]);
});

test('streaming: text deltas, tool_use input_json_delta concatenated raw, usage from message_start + message_delta', async () => {
  const events = anthropicSse({ text: ['Hel', 'lo'], tool: { id: 'toolu_s', name: 'echo', fragments: ['{"te', 'xt": ', '"hi"}'] }, usage: [40, 11] });
  const all = events.join('').replace(/\n/g, '\r\n'); // CRLF line ends, cut every 7 characters
  const pieces: string[] = [];
  for (let i = 0; i < all.length; i += 7) pieces.push(all.slice(i, i + 7));
  llm.queue({ sse: [': comment first\r\n', ...pieces] });
  const { deps } = setup([prov('claude', spec({ streaming: true }))]);
  const deltas: string[] = [];
  const r = await createChain(deps).complete({ messages: [user('x')], signal: signal(), onDelta: (t) => deltas.push(t) });
  assert.equal(deltas, ['Hel', 'lo']);
  assert.equal(r, { text: 'Hello', toolCall: { id: 'toolu_s', name: 'echo', arguments: '{"text": "hi"}' }, toolCallCount: 1, usage: { input_tokens: 40, output_tokens: 11 }, provider: 'claude', model: 'claude-x' });
  assert.is(llm.requests[0].body.stream, true);
});

test('streaming: a tool_use with no input deltas keeps its start block input', async () => {
  llm.queue({ sse: anthropicSse({ tool: { id: 't', name: 'now', fragments: [] } }) });
  const { deps } = setup([prov('claude', spec({ streaming: true }))]);
  const r = await createChain(deps).complete({ messages: [user('x')], signal: signal() });
  assert.equal(r.toolCall, { id: 't', name: 'now', arguments: '{}' });
});

test('streaming: an error event (overloaded) is retried; a truncated stream (no message_stop) fails typed', async () => {
  const start = anthropicSse({ text: ['a'] }).slice(0, 2);
  llm.queue(
    { sse: [...start, sseEvent('error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })] },
    { sse: anthropicSse({ text: ['ok'] }) },
  );
  const { deps, sleeps } = setup([prov('claude', spec({ streaming: true, retry: { initial_delay_ms: 10 } }))]);
  const r = await createChain(deps).complete({ messages: [user('x')], signal: signal() });
  assert.is(r.text, 'ok');
  assert.equal(sleeps, [8]);
  llm.queue({ sse: anthropicSse({ text: ['cut'], stop: false }) });
  const { deps: d1 } = setup([prov('claude', spec({ streaming: true, retry: { max_attempts: 1 } }))]);
  const e = await rejection(createChain(d1).complete({ messages: [user('x')], signal: signal() }));
  assert.equal(e.data.providers, [{ provider: 'claude', reason: 'truncated', message: 'claude: the stream ended before message_stop' }]);
});

test('malformed: a body without a content array', async () => {
  llm.queue({ json: { type: 'message', role: 'assistant' } });
  const { deps } = setup([prov('claude', spec())]);
  const e = await rejection(createChain(deps).complete({ messages: [user('x')], signal: signal() }));
  assert.is(e.code, -32020);
  assert.equal(e.data.providers, [{ provider: 'claude', reason: 'malformed', message: 'claude: malformed response: no content array' }]);
});

test.run();
