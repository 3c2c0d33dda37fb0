// `claw protocol check` through dist/claw.mjs: stdin → verdict JSON on stdout, exit 0 / 1 / 2.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLAW } from './helpers/claw-process.ts';

const dir = mkdtempSync(join(tmpdir(), 'claw-protocol-check-'));
const manifest = join(dir, 'claw.yaml');
writeFileSync(
  manifest,
  `claw: "0.3.0"
kind: Claw
metadata:
  name: proto-agent
spec:
  identity:
    inline:
      personality: "checks outputs"
  providers:
    - inline:
        protocol: openai-compatible
        endpoint: http://127.0.0.1:11434/v1
        model: m
        auth: { type: none }
  tools:
    - inline:
        name: echo
        description: echo text
        input_schema:
          type: object
          properties: { text: { type: string } }
          required: [text]
          additionalProperties: false
    - inline:
        name: get-time
        description: the time
        input_schema: { type: object }
`,
);

function check(stdin: string | Buffer, extra: string[] = []) {
  const r = spawnSync(process.execPath, [CLAW, 'protocol', 'check', '--manifest', manifest, ...extra], { input: stdin, encoding: 'utf8', cwd: dir, env: { PATH: process.env.PATH ?? '' } });
  return { code: r.status, out: r.stdout ? JSON.parse(r.stdout) : undefined, stderr: r.stderr };
}

test('a valid tool call → exit 0, form and tool', () => {
  const r = check('{"tool_call":{"tool":"echo","args":{"text":"hi"}}}\n');
  assert.is(r.code, 0, r.stderr);
  assert.equal(r.out, { valid: true, form: 'tool_call', tool: 'echo' });
  assert.equal(check('{"tool_call":{"tool":"get-time","args":{}}}').out, { valid: true, form: 'tool_call', tool: 'get-time' });
});

test('a valid message → exit 0', () => {
  const r = check('{"message":{"content":"{\\"tool_call\\":{\\"tool\\":\\"echo\\"}}"}}');
  assert.equal([r.code, r.out], [0, { valid: true, form: 'message' }]);
});

test('rejections → exit 1 with the failing step and reason', () => {
  const cases: [string | Buffer, string, string][] = [
    ['```json\n{"message":{"content":"x"}}\n```', 'parse', 'code_fence'],
    ['{"message":{"content":"a"},"message":{"content":"b"}}', 'parse', 'duplicate_key'],
    [Buffer.from([0x7b, 0xff, 0x7d]), 'parse', 'invalid_utf8'],
    ['{"execute":"rm -rf /"}', 'structure', 'unknown_field'],
    ['{"message":{"content":""}}', 'form', 'empty_content'],
    ['{"tool_call":{"tool":"Echo","args":{"text":"x"}}}', 'capability', 'unknown_tool'],
    ['{"tool_call":{"tool":"echo","args":{"text":1}}}', 'arguments', 'args_schema'],
  ];
  for (const [input, step, reason] of cases) {
    const r = check(input);
    assert.is(r.code, 1, `${input}: ${r.stderr}`);
    assert.equal([r.out.valid, r.out.step, r.out.reason], [false, step, reason], String(input));
  }
  const a = check('{"tool_call":{"tool":"echo","args":{"text":1}}}');
  assert.equal(a.out.issues, [{ path: '/text', keyword: 'type', message: 'Instance type "number" is invalid. Expected "string".' }]);
});

test('--correction adds the message for the model; --max-bytes applies', () => {
  const r = check('Sure! {"message":{"content":"x"}}', ['--correction']);
  assert.is(r.code, 1);
  assert.is(r.out.reason, 'text_around_json');
  assert.match(r.out.correction, /^Your previous output was rejected \(parse: text_around_json\)/);
  assert.match(r.out.correction, /Available tools: echo, get-time\.$/);
  const big = check(`{"message":{"content":"${'x'.repeat(100)}"}}`, ['--max-bytes', '50']);
  assert.equal([big.code, big.out.reason], [1, 'too_large']);
});

test('usage errors → exit 2: no --manifest, unknown subcommand, bad limit, manifest that does not load', () => {
  const run = (args: string[]) => spawnSync(process.execPath, [CLAW, ...args], { input: '{}', encoding: 'utf8', cwd: dir });
  assert.is(run(['protocol', 'check']).status, 2);
  assert.is(run(['protocol', 'lint']).status, 2);
  assert.is(run(['protocol', 'check', '--manifest', manifest, '--max-bytes', '0']).status, 2);
  const missing = run(['protocol', 'check', '--manifest', join(dir, 'nope.yaml')]);
  assert.is(missing.status, 2);
  assert.match(missing.stderr, /does not load/);
  assert.is(run(['protocol', '--help']).status, 0);
});

test.after(() => rmSync(dir, { recursive: true, force: true }));
test.run();
