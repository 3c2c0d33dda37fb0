// openai-compatible client against a real HTTP server (test/helpers/fake-llm-server.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createChain } from '../../src/provider/chain.ts';
import { openaiJson, openaiSse, startFakeLlm, type FakeLlm } from '../helpers/fake-llm-server.ts';
import { SECRET, prov, rejection, setup, signal, sys, user } from './provider-fixtures.ts';

let llm: FakeLlm;
test.before.each(async () => {
  llm = await startFakeLlm();
});
test.after.each(async () => {
  await llm.close();
});

const spec = (over: Record<string, unknown> = {}) => ({ protocol: 'openai-compatible', endpoint: `${llm.url}/v1`, model: 'llama3', auth: { type: 'none' }, ...over });

test('plain completion: request shape, text, usage, provider and model', async () => {
  llm.queue({ json: openaiJson({ content: '{"message":{"content":"hi"}}', usage: [12, 5] }) });
  const { deps, store } = setup([prov('local', spec())]);
  const r = await createChain(deps).complete({ messages: [sys('be brief'), user('hello')], signal: signal() });
  assert.equal(r, { text: '{"message":{"content":"hi"}}', toolCallCount: 0, usage: { input_tokens: 12, output_tokens: 5 }, provider: 'local', model: 'llama3' });
  const req = llm.requests[0];
  assert.is(req.method, 'POST');
  assert.is(req.url, '/v1/chat/completions');
  assert.is(req.headers['content-type'], 'application/json');
  assert.is(req.headers.authorization, undefined);
  assert.equal(req.body, { model: 'llama3', messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hello' }], stream: false });
  // the ledger got the real numbers
  assert.is([...store.data.values()][0].tokens, 17);
});

test('native tool call: first call mapped, arguments text untouched, count reported, parallel calls disabled', async () => {
  const args = '{"path":"a.txt","path":"b.txt",  "n":1.0}'; // duplicate key and spacing survive
  llm.queue({ json: openaiJson({ calls: [{ id: 'call_1', name: 'file-read', args }, { id: 'call_2', name: 'echo', args: '{}' }] }) });
  const { deps } = setup([prov('local', spec())]);
  const tools = [{ name: 'file-read', description: 'read', input_schema: { type: 'object' } }];
  const r = await createChain(deps).complete({ messages: [user('read')], tools, signal: signal() });
  assert.equal(r.toolCall, { id: 'call_1', name: 'file-read', arguments: args });
  assert.is(r.toolCallCount, 2);
  assert.is(r.text, '');
  assert.equal(llm.requests[0].body.tools, [{ type: 'function', function: { name: 'file-read', description: 'read', parameters: { type: 'object' } } }]);
  assert.is(llm.requests[0].body.parallel_tool_calls, false);
});

test('a server that sends arguments as an object: its raw text is taken from the body', async () => {
  llm.queue({ body: '{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c","function":{"name":"echo","arguments":{"text" : "x"}}}]}}]}' });
  const { deps } = setup([prov('local', spec())]);
  const r = await createChain(deps).complete({ messages: [user('x')], signal: signal() });
  assert.equal(r.toolCall, { id: 'c', name: 'echo', arguments: '{"text" : "x"}' });
});

test('tool turns go back in the API form: assistant tool_calls, tool messages with their id', async () => {
  llm.queue({ json: openaiJson({ content: 'done' }) });
  const { deps } = setup([prov('local', spec())]);
  await createChain(deps).complete({
    messages: [user('q'), { role: 'assistant', content: '', toolCall: { id: 'call_9', name: 'echo', arguments: '{"t":1}' } }, { role: 'tool', content: 'result', toolCallId: 'call_9' }, { role: 'tool', content: 'plain' }],
    signal: signal(),
  });
  assert.equal(llm.requests[0].body.messages, [
    { role: 'user', content: 'q' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'echo', arguments: '{"t":1}' } }] },
    { role: 'tool', tool_call_id: 'call_9', content: 'result' },
    { role: 'user', content: 'plain' },
  ]);
});

test('streaming: deltas in order, tool-call fragments concatenated, usage from the final chunk, stream_options sent', async () => {
  const sse = openaiSse({ text: ['Hel', 'lo'], call: { id: 'call_s', name: 'echo', fragments: ['{"te', 'xt":', '"hi"}'] }, usage: [30, 7] });
  // cut the whole stream into 5-byte pieces: boundaries fall inside lines and JSON
  const all = sse.join('');
  const pieces: string[] = [];
  for (let i = 0; i < all.length; i += 5) pieces.push(all.slice(i, i + 5));
  llm.queue({ sse: pieces });
  const { deps } = setup([prov('local', spec({ streaming: true }))]);
  const deltas: string[] = [];
  const r = await createChain(deps).complete({ messages: [user('x')], signal: signal(), onDelta: (t, from) => deltas.push(`${from.provider}#${from.attempt}:${t}`) });
  assert.equal(deltas, ['local#1:Hel', 'local#1:lo']);
  assert.equal(r, { text: 'Hello', toolCall: { id: 'call_s', name: 'echo', arguments: '{"text":"hi"}' }, toolCallCount: 1, usage: { input_tokens: 30, output_tokens: 7 }, provider: 'local', model: 'llama3' });
  assert.equal(llm.requests[0].body.stream_options, { include_usage: true });
  assert.is(llm.requests[0].body.stream, true);
});

test('streaming: multi-byte UTF-8 split across chunks decodes intact; invalid UTF-8 is malformed', async () => {
  const bytes = new TextEncoder().encode(openaiSse({ text: ['héllo 𝄞 ✓'] }).join(''));
  const cut = bytes.indexOf(0xf0) + 2; // inside the 4-byte sequence of 𝄞
  llm.queue({ sse: [bytes.slice(0, cut), bytes.slice(cut)] });
  const { deps } = setup([prov('local', spec({ streaming: true }))]);
  const r = await createChain(deps).complete({ messages: [user('x')], signal: signal() });
  assert.is(r.text, 'héllo 𝄞 ✓');
  const bad = new TextEncoder().encode(openaiSse({ text: ['ab'] }).join(''));
  bad[bad.indexOf(0x61)] = 0xff; // "a" → an invalid byte inside the JSON
  llm.queue({ sse: [bad] });
  const e = await rejection(createChain(deps).complete({ messages: [user('x')], signal: signal() }));
  assert.equal(e.data.providers, [{ provider: 'local', reason: 'malformed', message: 'local: malformed response: body is not valid UTF-8' }]);
});

test('streaming: [DONE] ends the answer even if the server keeps the connection open; a JSON reply to stream:true is read as one body', async () => {
  llm.queue({ sse: openaiSse({ text: ['done'] }), stall: true });
  const { deps } = setup([prov('local', spec({ streaming: true }))], { timeoutMs: 400 });
  const t0 = Date.now();
  assert.is((await createChain(deps).complete({ messages: [user('x')], signal: signal() })).text, 'done');
  assert.ok(Date.now() - t0 < 350, 'did not wait for the timeout');
  llm.queue({ json: openaiJson({ content: 'not streamed', usage: [2, 2] }) });
  assert.is((await createChain(deps).complete({ messages: [user('x')], signal: signal() })).text, 'not streamed');
});

test('a redirect is not followed (the key must not travel to another origin): HTTP 307, not retried', async () => {
  llm.queue({ status: 307, headers: { location: 'http://127.0.0.1:1/steal' }, json: {} });
  const { deps } = setup([prov('az', spec({ auth: { type: 'api-key-header', secret_ref: 'LLM_KEY' } }))]);
  const e = await rejection(createChain(deps).complete({ messages: [user('x')], signal: signal() }));
  assert.equal(e.data.providers, [{ provider: 'az', reason: 'http', message: 'az: HTTP 307', status: 307 }]);
  assert.is(llm.requests.length, 1);
});

test('an onDelta that throws does not fail the provider', async () => {
  llm.queue({ sse: openaiSse({ text: ['a', 'b'] }) });
  const { deps, log } = setup([prov('local', spec({ streaming: true }))]);
  const r = await createChain(deps).complete({ messages: [user('x')], signal: signal(), onDelta: () => { throw new Error('display broke'); } });
  assert.is(r.text, 'ab');
  assert.equal(log.entries.map((e) => e.msg), ['onDelta callback threw', 'onDelta callback threw']);
});

test('200 with an error object (gateways) is an api-error, retried; an error chunk mid-stream too', async () => {
  llm.queue({ json: { error: { type: 'server_error', message: 'upstream failed' } } }, { json: openaiJson({ content: 'ok' }) });
  const { deps, sleeps } = setup([prov('local', spec({ retry: { initial_delay_ms: 10 } }))]);
  assert.is((await createChain(deps).complete({ messages: [user('x')], signal: signal() })).text, 'ok');
  assert.equal(sleeps, [8]);
  llm.queue({ sse: [...openaiSse({ text: ['a'] }).slice(0, 2), 'data: {"error":{"type":"overloaded","message":"busy"}}\n\n'] });
  const { deps: d1 } = setup([prov('local', spec({ streaming: true, retry: { max_attempts: 1 } }))]);
  const e = await rejection(createChain(d1).complete({ messages: [user('x')], signal: signal() }));
  assert.equal(e.data.providers, [{ provider: 'local', reason: 'api-error', message: 'local: the API reported an error in the stream (overloaded)' }]);
});

test('bearer auth from secret_ref; the secret never appears in an error', async () => {
  llm.queue({ status: 401, json: { error: { type: 'invalid_api_key', message: `Incorrect API key provided: ${SECRET}` } } });
  const { deps } = setup([prov('cloud', spec({ auth: { type: 'bearer', secret_ref: 'LLM_KEY' } }))]);
  const e = await rejection(createChain(deps).complete({ messages: [user('x')], signal: signal() }));
  assert.is(llm.requests[0].headers.authorization, `Bearer ${SECRET}`);
  assert.is(e.code, -32020);
  assert.is(e.message, 'Provider unavailable: cloud: HTTP 401 (invalid_api_key)');
  assert.equal(e.data, { providers: [{ provider: 'cloud', reason: 'http', message: 'cloud: HTTP 401 (invalid_api_key)', status: 401 }] });
  assert.not.ok(JSON.stringify(e.toJSON()).includes(SECRET));
  assert.is(llm.requests.length, 1); // 4xx is not retried
});

test('api-key-header auth sends api-key; an unresolvable secret_ref fails naming the ref only', async () => {
  llm.queue({ json: openaiJson({ content: 'ok' }) });
  const { deps } = setup([prov('az', spec({ auth: { type: 'api-key-header', secret_ref: 'LLM_KEY' } }))]);
  await createChain(deps).complete({ messages: [user('x')], signal: signal() });
  assert.is(llm.requests[0].headers['api-key'], SECRET);
  assert.is(llm.requests[0].headers.authorization, undefined);
  const { deps: d2 } = setup([prov('az', spec({ auth: { type: 'bearer', secret_ref: 'MISSING_KEY' } }))]);
  const e = await rejection(createChain(d2).complete({ messages: [user('x')], signal: signal() }));
  assert.is(e.code, -32020);
  assert.match(e.message, /^Provider unavailable: az: secret_ref "MISSING_KEY" could not be resolved/);
  assert.is(llm.requests.length, 1); // nothing was sent without the secret
});

test('malformed JSON body is a typed failure, not retried', async () => {
  llm.queue({ body: '{"choices":[{"message":' });
  const { deps } = setup([prov('local', spec())]);
  const e = await rejection(createChain(deps).complete({ messages: [user('x')], signal: signal() }));
  assert.is(e.code, -32020);
  assert.equal(e.data.providers, [{ provider: 'local', reason: 'malformed', message: 'local: malformed response: body is not JSON' }]);
  assert.is(llm.requests.length, 1);
});

test('truncated stream (no [DONE], no finish_reason) is retried, then fails as truncated', async () => {
  const cut = openaiSse({ text: ['par', 'tial'], done: false }).slice(0, 2);
  llm.queue({ sse: cut }, { sse: cut });
  const { deps, sleeps } = setup([prov('local', spec({ streaming: true, retry: { max_attempts: 2, initial_delay_ms: 100 } }))]);
  const deltas: string[] = [];
  const e = await rejection(createChain(deps).complete({ messages: [user('x')], signal: signal(), onDelta: (t, f) => deltas.push(`${f.attempt}:${t}`) }));
  assert.equal(deltas, ['1:par', '2:par']);
  assert.equal(e.data.providers, [{ provider: 'local', reason: 'truncated', message: 'local: the stream ended before [DONE]' }]);
  assert.equal(sleeps, [75]); // equal jitter at random 0.5: 100/2 + 0.5*50
});

test.run();
