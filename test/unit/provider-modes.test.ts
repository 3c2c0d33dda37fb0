// Output modes (docs/agent.md "Output modes"): what each mode sends, the fall back to the next mode when a
// server refuses one (remembered for the session), and the server's own error words (http.ts serverMessage).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createChain } from '../../src/provider/chain.ts';
import { serverMessage } from '../../src/provider/http.ts';
import { modesFor, type FemtoClawContract, type ModelRequest } from '../../src/provider/output-mode.ts';
import { femtoclawOutputSchema } from '../../src/femtoclaw/output-schema.ts';
import { openaiJson, startFakeLlm, type FakeLlm } from '../helpers/fake-llm-server.ts';
import { prov, rejection, setup, signal, sys, user } from './provider-fixtures.ts';

let llm: FakeLlm;
test.before.each(async () => {
  llm = await startFakeLlm();
});
test.after.each(async () => {
  await llm.close();
});

const spec = (over: Record<string, unknown> = {}) => ({ protocol: 'openai-compatible', endpoint: `${llm.url}/v1`, model: 'qwen2.5:1.5b', auth: { type: 'none' }, retry: { max_attempts: 1 }, ...over });
const tools = [{ name: 'echo', description: 'Repeats', input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } }];
const contract = (over: Partial<FemtoClawContract> = {}): FemtoClawContract => ({ system: (m) => `SYSTEM-${m}`, schema: femtoclawOutputSchema(tools), native: true, ...over });
const req = (c = contract()): ModelRequest => ({ messages: [sys('default'), user('hi')], tools, signal: signal(), femtoclaw: c });

test('modes per protocol and setting: native → json_schema → prompt; anthropic has no json_schema; rules answer in the prompt form', () => {
  assert.equal(modesFor('openai-compatible', undefined, true), ['native', 'json_schema', 'prompt']);
  assert.equal(modesFor('openai-compatible', 'auto', false), ['json_schema', 'prompt']);
  assert.equal(modesFor('openai-compatible', 'json_schema', true), ['json_schema', 'prompt']);
  assert.equal(modesFor('openai-compatible', 'prompt', true), ['prompt']);
  assert.equal(modesFor('anthropic-native', undefined, true), ['native', 'prompt']);
  assert.equal(modesFor('custom', 'native', true), ['prompt']);
});

test('native mode sends tools and the native prompt; json_schema mode sends response_format with the FemtoClaw schema and no tools', async () => {
  llm.queue({ json: openaiJson({ content: 'hello' }) }, { json: openaiJson({ content: '{"message":{"content":"x"}}' }) });
  const { deps } = setup([prov('local', spec())]);
  const r = await createChain(deps).complete(req());
  assert.is((r as { mode?: string }).mode, 'native');
  const b0 = llm.requests[0]!.body;
  assert.equal([b0.messages[0].content, b0.tools.length, b0.response_format], ['SYSTEM-native', 1, undefined]);

  const s2 = setup([prov('local', spec())]);
  const r2 = await createChain(s2.deps).complete(req(contract({ settings: { local: 'json_schema' } })));
  assert.is((r2 as { mode?: string }).mode, 'json_schema');
  const b1 = llm.requests[1]!.body;
  assert.equal([b1.messages[0].content, b1.tools], ['SYSTEM-json_schema', undefined]);
  assert.equal(b1.response_format.type, 'json_schema');
  const schema = b1.response_format.json_schema.schema;
  assert.equal(schema.anyOf[1].properties.tool_call.properties.tool, { type: 'string', enum: ['echo'] });
  assert.equal(schema.anyOf[1].properties.tool_call.properties.args, tools[0]!.input_schema);
});

test('a server that refuses native tools (Ollama: "does not support tools", 400) gets json_schema; the choice is kept for the session and said once', async () => {
  llm.queue(
    { status: 400, json: { error: { message: 'registry.ollama.ai/library/gemma:2b does not support tools', type: 'api_error' } } },
    { json: openaiJson({ content: '{"message":{"content":"one"}}' }) },
    { json: openaiJson({ content: '{"message":{"content":"two"}}' }) },
  );
  const { deps, log } = setup([prov('local', spec())]);
  const chain = createChain(deps);
  const r1 = (await chain.complete(req())) as { mode?: string; notices?: string[] };
  assert.equal([r1.mode, r1.notices], ['json_schema', ['provider local refused native tool calling (HTTP 400: registry.ollama.ai/library/gemma:2b does not support tools); using json_schema mode for this session']]);
  const r2 = (await chain.complete(req())) as { mode?: string; notices?: string[] };
  assert.equal([r2.mode, r2.notices], ['json_schema', undefined]);
  assert.equal(llm.requests.map((q) => [q.body.tools !== undefined, q.body.response_format !== undefined]), [[true, false], [false, true], [false, true]]);
  assert.ok(log.entries.some((l) => l.msg === 'provider refused output mode'));
});

test('refusals walk down to prompt, never past it; a 404 (missing model) is not a mode refusal; prompt mode sends neither tools nor a schema', async () => {
  llm.queue({ status: 400, json: { error: { message: 'tools unsupported' } } }, { status: 422, json: { detail: 'response_format unsupported' } }, { status: 400, json: { error: { message: 'still bad' } } });
  const { deps } = setup([prov('local', spec())]);
  const e = await rejection(createChain(deps).complete(req()));
  assert.is(e.code, -32020);
  assert.is(llm.requests.length, 3);
  assert.equal([llm.requests[2]!.body.tools, llm.requests[2]!.body.response_format, llm.requests[2]!.body.messages[0].content], [undefined, undefined, 'SYSTEM-prompt']);

  llm.requests.length = 0;
  llm.queue({ status: 404, json: { error: { message: 'model "qwen2.5:1.5b" not found, try pulling it first', type: 'api_error' } } });
  const s2 = setup([prov('local', spec())]);
  const e2 = await rejection(createChain(s2.deps).complete(req()));
  assert.is(llm.requests.length, 1);
  assert.equal(e2.data.providers, [{ provider: 'local', reason: 'http', message: 'local: HTTP 404 (api_error)', status: 404, server_message: 'model "qwen2.5:1.5b" not found, try pulling it first', url: `${llm.url}/v1` }]);
});

test('outside native mode, native turns of the history go as their FemtoClaw text; in native mode the call goes alone', async () => {
  const history = [
    sys('default'),
    user('hi'),
    { role: 'assistant' as const, content: '{"tool_call":{"tool":"echo","args":{"text":"x"}}}', toolCall: { id: 'c1', name: 'echo', arguments: '{"text":"x"}' } },
    { role: 'tool' as const, content: '{"tool_result":{}}', toolCallId: 'c1' },
  ];
  llm.queue({ json: openaiJson({ content: 'a' }) }, { json: openaiJson({ content: '{"message":{"content":"b"}}' }) });
  const { deps } = setup([prov('local', spec())]);
  await createChain(deps).complete({ ...req(), messages: history });
  assert.equal(llm.requests[0]!.body.messages.slice(2), [
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'echo', arguments: '{"text":"x"}' } }] },
    { role: 'tool', tool_call_id: 'c1', content: '{"tool_result":{}}' },
  ]);
  const s2 = setup([prov('local', spec())]);
  await createChain(s2.deps).complete({ ...req(contract({ settings: { local: 'prompt' } })), messages: history });
  assert.equal(llm.requests[1]!.body.messages.slice(2), [
    { role: 'assistant', content: '{"tool_call":{"tool":"echo","args":{"text":"x"}}}' },
    { role: 'user', content: '{"tool_result":{}}' },
  ]);
});

test('the server\'s error message: first line, bounded, no control characters, key-shaped text masked, nothing for 401/403', () => {
  assert.is(serverMessage('model "x" not found, try pulling it first', 404), 'model "x" not found, try pulling it first');
  assert.is(serverMessage('404 page not found\n', 404), '404 page not found');
  assert.is(serverMessage('Incorrect API key provided: sk-abc123***wxyz', 400), 'Incorrect API key provided: [key]');
  assert.is(serverMessage('bad token AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 400), 'bad token [redacted]');
  assert.is(serverMessage('Incorrect API key provided: sk-abc', 401), undefined);
  assert.is(serverMessage('\u001b[31mred', 500), '[31mred');
  assert.is(serverMessage('word '.repeat(100), 500)!.length, 161);
  assert.is(serverMessage(42, 500), undefined);
});

test.run();
