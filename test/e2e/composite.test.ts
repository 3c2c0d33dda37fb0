// Composite tools end to end (docs/agent.md "Composite tools"; spec §5.4 composite/skill_ref, §5.5):
// dist/claw.mjs against the fake HTTP model (test/helpers/fake-llm-server.ts). The model first asks for
// the composite; the composite's sub-turn makes one sub-tool call (a real file-write in the sandbox) and
// answers; that answer is the composite's result. Once through `claw chat` (the agent loop), once through
// `claw run` + claw.tool.call (no agent module: the composite builds its own provider chain).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openaiJson, type FakeLlm } from '../helpers/fake-llm-server.ts';
import { makeAgent, chat, auditRecords, telemetryEvents, readWs, openaiProvider, msg, call, useFakeLlm } from './chat-helpers.ts';
import { initParams, startClaw } from './helpers/claw-process.ts';

let llm: FakeLlm;
useFakeLlm(test, (l) => (llm = l), () => llm);

const NOTE = { type: 'object', properties: { note: { type: 'string' } }, required: ['note'], additionalProperties: false };
const COMPOSITE = { name: 'take-note', description: 'Saves a note (a composite of the note-taker skill)', input_schema: { type: 'object' }, composite: true, skill_ref: 'note-taker' };
const SKILL = { name: 'note-taker', description: 'Saves notes', instruction: 'INSTR-NOTE: write the note to note.txt with file-write', tools_required: ['file-write'], input_schema: NOTE };
const data = (records: any[], kind: string) => records.filter((r) => r.kind === kind).map((r) => r.data);
const SUB_TASK = 'Run the skill "note-taker" for the tool "take-note" with these arguments: {"note":"buy milk"}\nWhen done, answer with the message form; its content is the tool\'s result.';

test('claw chat: the model calls a composite; its sub-turn writes through the gates as the skill; its answer is the tool result', async () => {
  const a = makeAgent({ providers: [openaiProvider(llm.url)], tools: [COMPOSITE], skills: [SKILL] });
  llm.queue(
    { json: openaiJson({ content: call('take-note', { note: 'buy milk' }) }) },
    { json: openaiJson({ content: call('file-write', { path: 'note.txt', content: 'buy milk' }) }) },
    { json: openaiJson({ content: msg('SUB-DONE saved') }) },
    { json: openaiJson({ content: msg('REPLY-1 noted') }) },
  );
  const r = await chat(a, ['PROMPT-1 remember to buy milk']);
  assert.is(r.code, 0, r.stderr);
  assert.is(r.stdout, 'REPLY-1 noted\n');
  assert.is(r.stderr, '');
  assert.is(readWs(a, 'note.txt'), 'buy milk');
  assert.is(llm.requests.length, 4);
  // The sub-turn: its own system prompt with the skill's instruction and only its tools; the arguments as the task.
  const sub = llm.requests[1]!.body;
  assert.ok(sub.messages[0].content.includes('INSTR-NOTE'));
  assert.ok(sub.messages[0].content.includes('- file-write: Writes a file'));
  assert.not.ok(sub.messages[0].content.includes('- take-note'));
  assert.not.ok(sub.messages[0].content.includes('- echo'));
  assert.equal(sub.tools.map((t: any) => t.function.name), ['file-write']);
  assert.equal(sub.messages.slice(1), [{ role: 'user', content: SUB_TASK }]);
  // The main turn sees the composite's result.
  assert.equal(llm.requests[3]!.body.messages.at(-1), { role: 'user', content: '{"tool_result":{"tool":"take-note","ok":true,"content":"SUB-DONE saved"}}' });
  const rec = auditRecords(a);
  // The composite call (no skill), and inside it the sub-call attributed to the wrapped skill.
  assert.equal(
    data(rec, 'capability.requested').map((d) => [d.tool, d.origin, d.skill]),
    [
      ['take-note', 'agent', undefined],
      ['file-write', 'agent', 'note-taker'],
    ],
  );
  assert.equal(
    data(rec, 'execution.finished').map((d) => [d.tool, d.outcome]),
    [
      ['file-write', 'ok'],
      ['take-note', 'ok'],
    ],
  );
  // Four model outputs, every one validated and recorded (main, sub, sub, main).
  assert.is(data(rec, 'protocol.validated').length, 4);
  const toolEvents = telemetryEvents(a).filter((e) => e.event === 'tool.call');
  assert.equal(
    toolEvents.map((e) => [e.tool ?? e.fields?.tool, e.status ?? e.fields?.status]),
    [
      ['file-write', 'ok'],
      ['take-note', 'ok'],
    ],
  );
});

test('claw run + claw.tool.call: a composite works without the agent module; the skill input_schema refuses bad arguments with -32602', async () => {
  const a = makeAgent({ providers: [openaiProvider(llm.url)], tools: [COMPOSITE], skills: [SKILL] });
  const claw = startClaw(['run', 'claw.yaml'], { cwd: a.dir, env: { HOME: a.dir } });
  try {
    const init = await claw.request('claw.initialize', initParams(), 'init');
    assert.ok(init.result, JSON.stringify(init.error) + claw.stderr());
    const bad = await claw.request('claw.tool.call', { name: 'take-note', arguments: { note: 7 }, context: { request_id: 'r-bad', identity: 'e2e-agent' } }, 'c1');
    assert.is(bad.error.code, -32602);
    assert.equal(
      bad.error.data.issues.map((i: any) => [i.path, i.keyword]),
      [
        ['/', 'properties'],
        ['/note', 'type'],
      ],
    );
    assert.is(llm.requests.length, 0);

    llm.queue({ json: openaiJson({ content: call('file-write', { path: 'run.txt', content: 'buy milk' }) }) }, { json: openaiJson({ content: msg('RUN-DONE') }) });
    const ok = await claw.request('claw.tool.call', { name: 'take-note', arguments: { note: 'buy milk' }, context: { request_id: 'r-ok', identity: 'e2e-agent' } }, 'c2');
    assert.equal(ok.result, { content: [{ type: 'text', text: 'RUN-DONE' }] }, JSON.stringify(ok) + claw.stderr());
    assert.is(readWs(a, 'run.txt'), 'buy milk');
    assert.is(llm.requests.length, 2);
    assert.equal(llm.requests[0]!.body.messages.slice(1), [{ role: 'user', content: SUB_TASK }]);
  } finally {
    await claw.end();
  }
  assert.equal(claw.garbage, []);
  // Audit is on for a manifest with composite tools (they run FemtoClaw sub-turns).
  const rec = auditRecords(a);
  assert.equal(
    data(rec, 'capability.requested').map((d) => [d.tool, d.origin, d.skill]),
    [
      ['take-note', 'operator', undefined],
      ['take-note', 'operator', undefined],
      ['file-write', 'agent', 'note-taker'],
    ],
  );
});

test.run();
