// The FemtoClaw output schema sent in json_schema mode (src/femtoclaw/output-schema.ts) describes exactly
// the two forms over the registered tools: what it accepts the validator accepts, and what it refuses the
// validator rejects too (checked with the runtime's own JSON Schema validator).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { femtoclawOutputSchema } from '../../src/femtoclaw/output-schema.ts';
import { compileArgumentSchema } from '../../src/tools/json-schema.ts';
import { validateOutput } from '../../src/femtoclaw/validate.ts';

const tools = [
  { name: 'mqtt-publish', input_schema: { type: 'object', properties: { topic: { type: 'string' }, payload: { type: 'string' } }, required: ['topic', 'payload'], additionalProperties: false } },
  { name: 'door-unlock', input_schema: { type: 'object', properties: {}, additionalProperties: false } },
];
const registry = new Map(tools.map((t) => [t.name, compileArgumentSchema(t.input_schema)]));

test('schema and validator agree on valid and invalid outputs', () => {
  const check = compileArgumentSchema(femtoclawOutputSchema(tools));
  const cases: [unknown, boolean][] = [
    [{ message: { content: 'hi' } }, true],
    [{ tool_call: { tool: 'mqtt-publish', args: { topic: 't', payload: 'ON' } } }, true],
    [{ tool_call: { tool: 'door-unlock', args: {} } }, true],
    [{ tool_call: { tool: 'Mqtt-publish', args: { topic: 't', payload: 'ON' } } }, false],
    [{ tool_call: { tool: 'mqtt-publish', args: '{"topic":"t"}' } }, false],
    [{ tool_call: { tool: 'mqtt-publish', args: { topic: 't' } } }, false],
    [{ tool_call: { tool: 'door-unlock', args: { force: true } } }, false],
    [{ message: { content: '' } }, false],
    [{ message: { content: 'x' }, tool_call: { tool: 'door-unlock', args: {} } }, false],
    [{ execute: 'rm -rf /' }, false],
  ];
  for (const [value, ok] of cases) {
    assert.is(check(value).length === 0, ok, `schema: ${JSON.stringify(value)}`);
    assert.is(validateOutput(JSON.stringify(value), registry).valid, ok, `validator: ${JSON.stringify(value)}`);
  }
});

test('without tools the message form is the only one', () => {
  const check = compileArgumentSchema(femtoclawOutputSchema([]));
  assert.is(check({ message: { content: 'hi' } }).length, 0);
  assert.ok(check({ tool_call: { tool: 'x', args: {} } }).length > 0);
});

test.run();
