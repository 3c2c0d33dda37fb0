// The system prompt the running agent sends (src/agent/prompt.ts, src/runtime/agent-module.ts):
// Identity personality, locale and context files (read beside the manifest, cut at 16 KiB, a missing
// one said on stderr and left out), the skills' instructions (applicability when a required tool is not
// bound: test/unit/agent-skills.test.ts), every tool's description and argument schema, and the FemtoClaw output contract — exactly
// as the model receives it from `claw chat` on dist/claw.mjs.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeLlm, openaiJson, type FakeLlm } from '../helpers/fake-llm-server.ts';
import { makeAgent, removeAgents, chat, openaiProvider, msg, ECHO_SCHEMA, WRITE_SCHEMA } from './chat-helpers.ts';

let llm: FakeLlm;
test.before(async () => {
  llm = await startFakeLlm();
});
test.after(async () => {
  await llm.close();
  removeAgents();
});

test('system prompt (prompt mode): identity, locale, context files, applicable skill instructions, tool descriptions and schemas, output contract', async () => {
  const a = makeAgent({
    providers: [openaiProvider(llm.url)],
    // Prompt mode: the protocol and the schemas are in the prompt (native mode: test/e2e/chat.test.ts).
    runtime: { agent: { native_tools: false } },
    skills: [
      { name: 'notes', description: 'Keeps notes', instruction: 'INSTR-notes: write notes with file-write.', tools_required: ['file-write'] },
    ],
  });
  const file = join(a.dir, 'claw.yaml');
  const m = JSON.parse(readFileSync(file, 'utf8'));
  Object.assign(m.spec.identity.inline, { locale: 'de-DE', context_files: { user: 'USER.md', memory: 'MEMORY.md', missing: 'NOPE.md' } });
  writeFileSync(file, JSON.stringify(m, null, 2));
  writeFileSync(join(a.dir, 'USER.md'), '  The user is called Kim and prefers metric units.\n');
  writeFileSync(join(a.dir, 'MEMORY.md'), 'M'.repeat(20_000));

  llm.queue({ json: openaiJson({ content: msg('REPLY-1') }) });
  const r = await chat(a, ['PROMPT-1'], { args: ['--log-level', 'warn'] });
  assert.is(r.code, 0, r.stderr);
  assert.is(r.stdout, 'REPLY-1\n');
  const system = llm.requests[0]!.body.messages[0].content as string;
  const parts = system.split('\n\n');
  assert.equal(parts.slice(0, 5), [
    'You are e2e-agent.',
    'You are a test agent.',
    'Answer in the locale de-DE unless the user writes in another language.',
    '# Context: user\nThe user is called Kim and prefers metric units.',
    `# Context: memory\n${'M'.repeat(16_384)}`,
  ]);
  assert.not.ok(system.includes('# Context: missing'));
  const warn = r.stderr.split('\n').filter((l) => l.includes('context file not readable')).map((l) => JSON.parse(l));
  assert.equal(warn.map((w) => [w.name, w.path, w.error]), [['missing', 'NOPE.md', 'ENOENT']]);

  assert.equal(parts[5], '# Skills\n## notes: Keeps notes\nINSTR-notes: write notes with file-write.');
  // Bound tools only, each with its description and its argument schema as JSON.
  assert.equal(parts[6], [
    '# Tools',
    `- echo: Repeats a text back\n  args schema: ${JSON.stringify(ECHO_SCHEMA)}`,
    `- file-write: Writes a file\n  args schema: ${JSON.stringify(WRITE_SCHEMA)}`,
    `- careful-write: Writes a file after a person agrees\n  args schema: ${JSON.stringify(WRITE_SCHEMA)}`,
    `- forbidden-write: Writes a file (never allowed)\n  args schema: ${JSON.stringify(WRITE_SCHEMA)}`,
  ].join('\n'));
  assert.ok(parts[7]!.startsWith('# Output protocol (strict): answer with exactly one JSON object and nothing else.'), parts[7]);
  assert.ok(parts[7]!.includes('{"message":{"content":"<your reply>"}}') && parts[7]!.includes('{"tool_call":{"tool":"<tool name>","args":{<arguments matching the tool schema>}}}'));
  assert.is(parts.length, 8);
});

test.run();
