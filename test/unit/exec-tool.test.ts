// Exec tools (src/tools/exec.ts; docs/tools.md "Exec tools").
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createExecImpl, parseExecOutput, renderArgv } from '../../src/tools/exec.ts';
import { fakeRunner, runOutcome } from './helpers/gate-fakes.ts';

test('renderArgv: placeholders in a value, missing/null → empty, non-strings as JSON, no splitting, no re-expansion', () => {
  assert.equal(renderArgv(['--city', '{{city}}', '--q={{ q }}', '{{n}}', '{{o}}', '{{missing}}', '{{nul}}', 'plain'], { city: 'New York; rm -rf /', q: '{{city}}', n: 5, o: { a: [1] }, nul: null }), [
    '--city',
    'New York; rm -rf /',
    '--q={{city}}',
    '5',
    '{"a":[1]}',
    '',
    '',
    'plain',
  ]);
  assert.equal(renderArgv(['{{a}}-{{b}}'], { a: 'x', b: true }), ['x-true']);
});

test('parseExecOutput: content JSON used as is; anything else one text block', () => {
  const blocks = [{ type: 'text', text: 'hi' }, { type: 'image', data: 'AA==', mimeType: 'image/png' }, { type: 'resource', resource: { uri: 'x' } }];
  assert.equal(parseExecOutput(`  ${JSON.stringify({ content: blocks })}\n`), blocks);
  for (const s of ['plain\n', '{"content":[{"type":"text"}]}', '{"content":[{"type":"video","text":"x"}]}', '{"content":"x"}', '{bad json', '[1]', '{"other":1}']) {
    assert.equal(parseExecOutput(s), [{ type: 'text', text: s }], s);
  }
});

test('createExecImpl: argv, stdin JSON, env/cwd, secrets resolved and passed, exit 0', async () => {
  const run = fakeRunner(() => runOutcome({ stdout: 'sunny' }));
  const resolved: string[][] = [];
  const impl = createExecImpl({ bin: '/bin/weather', argv: ['--city', '{{city}}'], cwd: '/w', env: { A: '1' }, secrets: ['KEY'] }, { run, resolveSecrets: async (r) => (resolved.push(r), { KEY: 'v4lue' }) });
  assert.is(impl.kind, 'exec');
  assert.is(impl.touchesOs, true);
  assert.is(impl.commandLine!({ city: 'Paris' }, { level: 'none' }), '/bin/weather --city Paris');
  const ac = new AbortController();
  const sandbox = { level: 'process' as const };
  assert.equal(await impl.run({ city: 'Paris' }, { signal: ac.signal, requestId: 'r', sandbox, timeoutMs: 500 }), { content: [{ type: 'text', text: 'sunny' }] });
  assert.equal(resolved, [['KEY']]);
  assert.equal(run.requests[0], { bin: '/bin/weather', argv: ['--city', 'Paris'], stdin: '{"city":"Paris"}', env: { A: '1' }, cwd: '/w', sandbox, timeoutMs: 500, signal: ac.signal, secrets: { KEY: 'v4lue' } });
  const noSecrets = createExecImpl({ bin: 'x' }, { run, resolveSecrets: async () => assert.unreachable('not called') as any });
  await noSecrets.run({}, { signal: ac.signal, requestId: 'r', sandbox });
  assert.is(run.requests[1].secrets, undefined);
  assert.equal(run.requests[1].argv, []);
});

test('createExecImpl: non-zero exit, signal, truncation', async () => {
  const ctx = { signal: new AbortController().signal, requestId: 'r', sandbox: { level: 'none' as const } };
  const mk = (o: any) => createExecImpl({ bin: 'x' }, { run: fakeRunner(() => runOutcome(o)), resolveSecrets: async () => ({}) });
  assert.equal(await mk({ exitCode: 2, stdout: 'out', stderr: 'e'.repeat(2500) }).run({}, ctx), { content: [{ type: 'text', text: 'out' }, { type: 'text', text: `[exit 2]\n${'e'.repeat(2000)}` }], isError: true });
  assert.equal(await mk({ exitCode: null, signal: 'SIGKILL' }).run({}, ctx), { content: [{ type: 'text', text: '' }, { type: 'text', text: '[killed by SIGKILL]' }], isError: true });
  assert.equal(await mk({ stdout: 'abc', stdoutTruncated: true }).run({}, ctx), { content: [{ type: 'text', text: 'abc' }, { type: 'text', text: "[output truncated by the sandbox's max_output_bytes]" }] });
});

test.run();
