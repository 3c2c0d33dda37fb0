// The simulated small model (test/helpers/sim-llm-server.ts) speaks the two APIs as the real servers do:
// the shapes other tests rely on, checked once here.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startSimLlm, type SimLlm } from '../helpers/sim-llm-server.ts';
import { femtoclawOutputSchema } from '../../src/femtoclaw/output-schema.ts';

let sim: SimLlm;
test.before.each(async () => {
  sim = await startSimLlm({ models: ['qwen2.5:1.5b'], intents: [{ when: 'light', tool: 'mqtt-publish', args: { topic: 't', payload: 'ON' }, reply: 'Done.', quirk: 'tool_case' }] });
});
test.after.each(async () => {
  await sim.close();
});

const post = async (path: string, body: unknown) => {
  const r = await fetch(`${sim.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, text: await r.text() };
};
const tool = { type: 'function', function: { name: 'mqtt-publish', parameters: { type: 'object' } } };

test('Ollama: /api/tags, 404 body for a missing model, /api/chat with tools (object arguments) and with format', async () => {
  const tags = (await (await fetch(`${sim.url}/api/tags`)).json()) as any;
  assert.equal(tags.models.map((m: any) => m.name), ['qwen2.5:1.5b']);
  const missing = await post('/api/chat', { model: 'llama3.2:1b', messages: [{ role: 'user', content: 'hi' }], stream: false });
  assert.equal([missing.status, missing.text], [404, '{"error":"model \\"llama3.2:1b\\" not found, try pulling it first"}']);
  const native = JSON.parse((await post('/api/chat', { model: 'qwen2.5:1.5b', messages: [{ role: 'user', content: 'light on' }], tools: [tool], stream: false })).text);
  assert.equal(native.message.tool_calls, [{ function: { name: 'Mqtt-publish', arguments: { topic: 't', payload: 'ON' } } }]);
  assert.equal([native.done, typeof native.prompt_eval_count, typeof native.eval_count], [true, 'number', 'number']);
  const constrained = JSON.parse((await post('/api/chat', { model: 'qwen2.5:1.5b', messages: [{ role: 'user', content: 'light on' }], format: femtoclawOutputSchema([{ name: 'mqtt-publish' }]), stream: false })).text);
  assert.is(constrained.message.content, '{"tool_call":{"tool":"mqtt-publish","args":{"topic":"t","payload":"ON"}}}');
  const streamed = (await post('/api/chat', { model: 'qwen2.5:1.5b', messages: [{ role: 'user', content: 'hello' }] })).text.trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(streamed.map((c) => c.done), [false, true]);
});

test('OpenAI: /v1/models, the 404 error object, tool_calls with string arguments, response_format, and tools refused when unsupported', async () => {
  const models = (await (await fetch(`${sim.url}/v1/models`)).json()) as any;
  assert.equal(models.data.map((m: any) => [m.id, m.object]), [['qwen2.5:1.5b', 'model']]);
  const missing = await post('/v1/chat/completions', { model: 'x', messages: [{ role: 'user', content: 'hi' }] });
  assert.equal([missing.status, JSON.parse(missing.text).error.message], [404, 'model "x" not found, try pulling it first']);
  const r = JSON.parse((await post('/v1/chat/completions', { model: 'qwen2.5:1.5b', messages: [{ role: 'user', content: 'light on' }], tools: [tool] })).text);
  assert.equal([r.choices[0].finish_reason, r.choices[0].message.tool_calls[0].function], ['tool_calls', { name: 'Mqtt-publish', arguments: '{"topic":"t","payload":"ON"}' }]);
  assert.equal(Object.keys(r.usage), ['prompt_tokens', 'completion_tokens', 'total_tokens']);
  sim.options.tools = false;
  const refused = await post('/v1/chat/completions', { model: 'qwen2.5:1.5b', messages: [{ role: 'user', content: 'light on' }], tools: [tool] });
  assert.equal([refused.status, JSON.parse(refused.text).error.message], [400, 'registry.ollama.ai/library/qwen2.5:1.5b does not support tools']);
  const noV1 = await post('/chat/completions', { model: 'qwen2.5:1.5b', messages: [] });
  assert.equal([noV1.status, noV1.text], [404, '404 page not found']);
});

test('after a correction the model gets it right (the quirk applies to the first answer of a turn)', async () => {
  const messages = [
    { role: 'user', content: 'light on' },
    { role: 'assistant', content: '{"tool_call":{"tool":"Mqtt-publish","args":{}}}' },
    { role: 'user', content: 'Your previous output was rejected (capability: unknown_tool): …' },
  ];
  const r = JSON.parse((await post('/v1/chat/completions', { model: 'qwen2.5:1.5b', messages })).text);
  assert.is(r.choices[0].message.content, '{"tool_call":{"tool":"mqtt-publish","args":{"topic":"t","payload":"ON"}}}');
});

test.run();
