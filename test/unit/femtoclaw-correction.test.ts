// correctionFor (src/femtoclaw/correction.ts) and the registry builders (src/femtoclaw/registry.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { correctionFor, DEFAULT_CORRECTION_MAX_CHARS } from '../../src/femtoclaw/correction.ts';
import { validateOutput, type CapabilityRegistry } from '../../src/femtoclaw/validate.ts';
import { capabilitiesFromManifest, capabilitiesOf } from '../../src/femtoclaw/registry.ts';
import { compileArgumentSchema } from '../../src/tools/json-schema.ts';
import { Redactor } from '../../src/log/redactor.ts';
import type { Rejection } from '../../src/femtoclaw/verdict.ts';

const reg: CapabilityRegistry = new Map([['echo', compileArgumentSchema({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] })]]);
const rejected = (raw: string) => validateOutput(raw, reg) as Rejection;
const SECRET = 'sk-live-0123456789abcdef';

test('exact text for an unknown tool, with the tool list', () => {
  assert.is(
    correctionFor(rejected('{"tool_call":{"tool":"Echo","args":{}}}'), { tools: ['echo'] }),
    'Your previous output was rejected (capability: unknown_tool): there is no tool named "Echo" (names are exact and case-sensitive). ' +
      'Answer with exactly one JSON object and nothing else (no code fences, no text before or after): {"message":{"content":"..."}} to reply, or {"tool_call":{"tool":"<name>","args":{...}}} to call a tool. Available tools: echo.',
  );
});

test('each reason gets its explanation; fields and argument issues named', () => {
  const cases: [string, RegExp][] = [
    ['```json\n{}\n```', /\(parse: code_fence\): it was wrapped in a code fence\./],
    ['{"message":{"content":"x","role":"a"}}', /\(form: unknown_field\): the field \/message\/role is not allowed\./],
    ['{"tool_call":{"tool":"echo"}}', /\(form: missing_field\): the field \/tool_call\/args is missing\./],
    ['{"tool_call":{"tool":"echo","args":{"text":5}}}', /\(arguments: args_schema\): its args do not match the input schema of "echo" \(\/text: Instance type "number" is invalid\. Expected "string"\.\)\./],
    ['{"message":{"content":"a"},"tool_call":{}}', /\(structure: both_forms\): it had both "message" and "tool_call"\./],
  ];
  for (const [raw, re] of cases) assert.match(correctionFor(rejected(raw)), re, raw);
  const several: Rejection = { valid: false, step: 'structure', reason: 'several_tool_calls', detail: '', form: 'tool_call' };
  assert.match(correctionFor(several), /\(structure: several_tool_calls\): it held several tool calls; call exactly one tool per answer\./);
});

test('never echoes the rejected output; model-chosen names are redacted and clipped; bounded', () => {
  const r = new Redactor();
  r.add(SECRET);
  const outs = [`${SECRET} {"message":{"content":"x"}}`, `{"message":{"content":"${SECRET}"},"x":1}`, `{"tool_call":{"tool":"echo","args":{"text":"${SECRET}","${SECRET}":1}}}`, `{"${SECRET}":1}`, `{"tool_call":{"tool":"${SECRET}","args":{}}}`];
  for (const o of outs) {
    const c = correctionFor(rejected(o), { redact: (s) => r.redact(s), tools: ['echo'] });
    assert.not.ok(c.includes(SECRET), c);
  }
  const many = Array.from({ length: 500 }, (_, i) => `tool-number-${i}`);
  const c = correctionFor(rejected('{}'), { tools: many });
  assert.ok(c.length <= DEFAULT_CORRECTION_MAX_CHARS);
  assert.ok(c.includes('tool-number-19, …'));
  assert.not.ok(c.includes('tool-number-20'));
  assert.is(correctionFor(rejected('{}'), { maxChars: 50 }).length, 50);
});

test('capabilitiesOf shares the bound tools\' compiled checks; capabilitiesFromManifest compiles input_schema and notes the unknowable', () => {
  const check = compileArgumentSchema({ type: 'object' });
  assert.is(capabilitiesOf(new Map([['a', { check }]])).get('a'), check);
  const tool = (name: string, spec: Record<string, unknown>) => ({ kind: 'Tool', name, labels: {}, annotations: {}, spec, origin: { file: 'm', specPath: [] } });
  const m: any = {
    tools: [
      tool('echo', { input_schema: { type: 'object', required: ['text'] } }),
      tool('remote', { mcp_source: { server: 'x' } }),
      tool('broken', { input_schema: { type: 'nonsense' } }),
    ],
  };
  const { registry, notes } = capabilitiesFromManifest(m);
  assert.equal([...registry.keys()], ['echo', 'remote']);
  assert.equal(registry.get('echo')!({}).map((i) => i.keyword), ['required']);
  assert.equal(registry.get('remote')!({ anything: 1 }), []);
  assert.is(notes.length, 2);
  assert.match(notes[0], /^tool remote: input_schema comes from its MCP server at run time/);
  assert.match(notes[1], /^tool broken: input_schema is not usable/);
});

test.run();
