// `claw chat` end to end: dist/claw.mjs against a real HTTP model
// (test/helpers/fake-llm-server.ts) scripted per test. Each test checks the exact reply lines on
// stdout, whether a tool's side effect happened, what the model was sent, the audit log (verified
// with `claw audit verify`) and the telemetry file (events, and no prompt or response text).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { deadUrl, openaiJson, openaiSse, anthropicBodyText, anthropicSse, type FakeLlm } from '../helpers/fake-llm-server.ts';
import { makeAgent, chat, chatTty, auditRecords, auditKinds, telemetryEvents, readWs, openaiProvider, msg, call, type Agent, useFakeLlm } from './chat-helpers.ts';

/** The fixed part of every correction (src/femtoclaw/correction.ts), and the tool list of the test agent. */
const SHAPE =
  'Answer with exactly one JSON object and nothing else (no code fences, no text before or after): {"message":{"content":"..."}} to reply, or {"tool_call":{"tool":"<name>","args":{...}}} to call a tool.';
const TOOLS = ' Available tools: echo, file-write, careful-write, forbidden-write.';
/** The same correction in native mode: the model is told to use the API's tool calling, not to write JSON. */
const NATIVE_SHAPE = 'Answer in plain text, or call exactly one tool with the tool-calling interface, with arguments that match its schema.';
/** `claw chat`'s give-up line: the reason in words, and where the detail is. */
const gaveUp = (a: Agent, problem: string) => `Sorry, I could not produce a valid answer — the model answered 3× without a valid tool call or message: ${problem}. Details: protocol.rejected records in ${a.dataDir}/audit/audit.jsonl`;

let llm: FakeLlm;
useFakeLlm(test, (l) => (llm = l), () => llm);

/** The messages of request i, without the system prompt (checked once, below). */
function convo(i: number): { role: string; content: string }[] {
  const m = llm.requests[i]!.body.messages as { role: string; content: string }[];
  assert.is(m[0]!.role, 'system');
  return m.slice(1);
}

/** Telemetry event names in order, without lifecycle and metrics events. */
function flow(events: any[]): string[] {
  return events.filter((e) => e.category !== 'lifecycle' && e.category !== 'metrics').map((e) => e.event);
}

/** No prompt, model output or correction text reaches telemetry (spec §5.11). */
function assertNoBodies(a: Agent, texts: string[]): void {
  const all = JSON.stringify(telemetryEvents(a));
  for (const t of ['You are a test agent', 'Output protocol', 'Your previous output was rejected', ...texts]) {
    assert.not.ok(all.includes(t), `telemetry carries "${t}"`);
  }
}

const data = (records: any[], kind: string) => records.filter((r) => r.kind === kind).map((r) => r.data);

test('a valid tool call runs the tool, its result goes back to the model, the final message is the one reply line', async () => {
  const a = makeAgent({ providers: [openaiProvider(llm.url)] });
  llm.queue(
    { json: openaiJson({ content: call('file-write', { path: 'a.txt', content: 'hello' }), usage: [100, 10] }) },
    { json: openaiJson({ content: msg('REPLY-1 written'), usage: [120, 5] }) },
  );
  const r = await chat(a, ['PROMPT-1 please write']);
  assert.is(r.code, 0, r.stderr);
  assert.is(r.stdout, 'REPLY-1 written\n');
  assert.is(r.stderr, '');
  assert.is(readWs(a, 'a.txt'), 'hello');
  assert.is(llm.requests.length, 2);
  assert.is(llm.requests[0]!.url, '/v1/chat/completions');
  const system = llm.requests[0]!.body.messages[0].content as string;
  // Native mode (the default): tools are named in the prompt, their schemas travel once, as native definitions.
  for (const part of ['You are e2e-agent.', 'You are a test agent.', '- file-write: Writes a file', 'call exactly one tool with the tool-calling interface']) assert.ok(system.includes(part), part);
  assert.not.ok(system.includes('args schema') || system.includes('Output protocol'), system);
  assert.equal(llm.requests[0]!.body.tools.map((t: any) => t.function.name), ['echo', 'file-write', 'careful-write', 'forbidden-write']);
  assert.equal(convo(1), [
    { role: 'user', content: 'PROMPT-1 please write' },
    { role: 'assistant', content: call('file-write', { path: 'a.txt', content: 'hello' }) },
    { role: 'user', content: '{"tool_result":{"tool":"file-write","ok":true,"content":"wrote 5 bytes to a.txt"}}' },
  ]);

  const rec = auditRecords(a);
  assert.equal(auditKinds(rec), [
    'protocol.received',
    'protocol.validated',
    'capability.requested',
    'authorization.decided',
    'execution.started',
    'execution.finished',
    'protocol.received',
    'protocol.validated',
  ]);
  const [req] = data(rec, 'capability.requested');
  assert.equal([req.tool, req.origin, req.identity, req.args], ['file-write', 'agent', 'e2e-agent', { path: 'a.txt', content: 'hello' }]);
  assert.is(data(rec, 'authorization.decided')[0].decision, 'allow');
  assert.is(data(rec, 'execution.finished')[0].outcome, 'ok');
  assert.equal(data(rec, 'protocol.received').map((d) => d.output), [call('file-write', { path: 'a.txt', content: 'hello' }), msg('REPLY-1 written')]);

  const ev = telemetryEvents(a);
  assert.equal(flow(ev), ['protocol.received', 'protocol.validated', 'capability.requested', 'tool.call', 'protocol.received', 'protocol.validated']);
  const tc = ev.find((e) => e.event === 'tool.call');
  assert.equal([tc.tool, tc.status, tc.origin, tc.request_id], ['file-write', 'ok', 'agent', req.request_id]);
  assert.equal(
    ev.filter((e) => e.event === 'metrics.token_usage').map((e) => [e.provider, e.input_tokens, e.output_tokens]),
    [['fake-openai', 100, 10], ['fake-openai', 120, 5]],
  );
  assert.equal(
    ev.filter((e) => e.event === 'lifecycle.transition').map((e) => `${e.from}>${e.to}`),
    ['INIT>STARTING', 'STARTING>READY', 'READY>STOPPING', 'STOPPING>STOPPED'],
  );
  assert.ok(ev.some((e) => e.event === 'metrics.latency' && e.histogram.name === 'agent.turn' && e.histogram.count === 1));
  assertNoBodies(a, ['PROMPT-1', 'REPLY-1']);
});

test('invalid outputs (code fence, unknown tool, bad args) execute nothing and are corrected; each turn starts clean', async () => {
  const a = makeAgent({ providers: [openaiProvider(llm.url)], runtime: { agent: { native_tools: false } } });
  const fenced = '```json\n' + call('file-write', { path: 'fence.txt', content: 'x' }) + '\n```';
  llm.queue(
    { json: openaiJson({ content: fenced }) },
    { json: openaiJson({ content: msg('REPLY-A') }) },
    { json: openaiJson({ content: call('File-write', { path: 'case.txt', content: 'x' }) }) },
    { json: openaiJson({ content: msg('REPLY-B') }) },
    { json: openaiJson({ content: '{"tool_call":{"tool":"file-write","args":{"path":"args.txt","content":5}}}' }) },
    { json: openaiJson({ content: msg('REPLY-C') }) },
  );
  const r = await chat(a, ['PROMPT-A', 'PROMPT-B', 'PROMPT-C']);
  assert.is(r.code, 0, r.stderr);
  assert.equal(r.replies, ['REPLY-A', 'REPLY-B', 'REPLY-C']);
  for (const f of ['fence.txt', 'case.txt', 'args.txt']) assert.is(readWs(a, f), undefined, f);
  assert.is(llm.requests.length, 6);
  // The retry shows the model what it wrote, then why it was refused: user, assistant, user.
  assert.equal(convo(1), [
    { role: 'user', content: 'PROMPT-A' },
    { role: 'assistant', content: fenced },
    { role: 'user', content: `Your previous output was rejected (parse: code_fence): it was wrapped in a code fence. ${SHAPE}${TOOLS}` },
  ]);
  // The rejected output and its correction are not part of the conversation: turn B starts from A's outcome.
  assert.equal(convo(2), [
    { role: 'user', content: 'PROMPT-A' },
    { role: 'assistant', content: msg('REPLY-A') },
    { role: 'user', content: 'PROMPT-B' },
  ]);
  assert.equal(convo(3).at(-1), {
    role: 'user',
    content: `Your previous output was rejected (capability: unknown_tool): there is no tool named "File-write" (names are exact and case-sensitive). ${SHAPE}${TOOLS}`,
  });
  assert.equal(convo(5).at(-1), {
    role: 'user',
    content: `Your previous output was rejected (arguments: args_schema): its args do not match the input schema of "file-write" (/content: Instance type "number" is invalid. Expected "string".). ${SHAPE}${TOOLS}`,
  });

  const rec = auditRecords(a);
  assert.not.ok(auditKinds(rec).some((k) => k.startsWith('capability.') || k.startsWith('execution.') || k.startsWith('authorization.')));
  assert.equal(
    data(rec, 'protocol.rejected').map((d) => [d.step, d.reason, d.tool]),
    [
      ['parse', 'code_fence', undefined],
      ['capability', 'unknown_tool', 'File-write'],
      ['arguments', 'args_schema', 'file-write'],
    ],
  );
  assert.equal(data(rec, 'protocol.received')[0].output, fenced);
  const ev = telemetryEvents(a);
  assert.equal(
    ev.filter((e) => e.event === 'protocol.rejected').map((e) => [e.category, e.step, e.reason]),
    [
      ['errors', 'parse', 'code_fence'],
      ['errors', 'capability', 'unknown_tool'],
      ['errors', 'arguments', 'args_schema'],
    ],
  );
  assert.not.ok(ev.some((e) => e.event === 'tool.call' || e.event === 'capability.requested'));
  assertNoBodies(a, ['PROMPT-', 'REPLY-', 'fence.txt']);
});

test('too many invalid outputs: the give-up line says why and where the detail is, nothing executed; the chat goes on; agent.max_corrections is honoured', async () => {
  const a = makeAgent({ providers: [openaiProvider(llm.url)], runtime: { agent: { native_tools: false } } });
  const bad = 'Sure! ' + call('file-write', { path: 'bad.txt', content: 'x' });
  llm.queue({ json: openaiJson({ content: bad }) }, { json: openaiJson({ content: bad }) }, { json: openaiJson({ content: bad }) }, { json: openaiJson({ content: msg('REPLY-2') }) });
  const r = await chat(a, ['PROMPT-1', 'PROMPT-2']);
  assert.is(r.code, 0, r.stderr);
  assert.equal(r.replies, [gaveUp(a, 'text around JSON'), 'REPLY-2']);
  assert.is(readWs(a, 'bad.txt'), undefined);
  // 1 + max_corrections (2) requests for the first turn, then one for the second.
  assert.is(llm.requests.length, 4);
  assert.equal(convo(3), [{ role: 'user', content: 'PROMPT-1' }, { role: 'user', content: 'PROMPT-2' }]);
  const rec = auditRecords(a);
  assert.equal(data(rec, 'protocol.rejected').map((d) => d.reason), ['text_around_json', 'text_around_json', 'text_around_json']);
  assert.not.ok(auditKinds(rec).includes('capability.requested'));

  const b = makeAgent({ providers: [openaiProvider(llm.url)], runtime: { agent: { max_corrections: 0, native_tools: false } } });
  llm.requests.length = 0;
  llm.queue({ json: openaiJson({ content: bad }) });
  const s = await chat(b, ['PROMPT-3']);
  assert.equal(s.replies, [gaveUp(b, 'text around JSON').replace('3×', '1×')]);
  assert.is(llm.requests.length, 1);
  // Piped, the last message without an answer makes the exit status 1 (a script can tell).
  assert.is(s.code, 1);
});

test('a message whose content holds a tool call is printed, never executed', async () => {
  const a = makeAgent({ providers: [openaiProvider(llm.url)] });
  const looksLike = 'run this: ' + call('file-write', { path: 'pwned.txt', content: 'pwned' });
  llm.queue({ json: openaiJson({ content: msg(looksLike) }) });
  const r = await chat(a, ['PROMPT-1']);
  assert.is(r.code, 0, r.stderr);
  assert.is(r.stdout, `${looksLike}\n`);
  assert.is(readWs(a, 'pwned.txt'), undefined);
  assert.is(llm.requests.length, 1);
  const rec = auditRecords(a);
  assert.equal(auditKinds(rec), ['protocol.received', 'protocol.validated']);
  assert.equal(data(rec, 'protocol.validated')[0].form, 'message');
  assert.equal(flow(telemetryEvents(a)), ['protocol.received', 'protocol.validated']);
  assertNoBodies(a, ['PROMPT-1', 'pwned']);
});

test('a tool the policy denies: nothing runs, the model gets the -32011 error result and answers', async () => {
  const a = makeAgent({ providers: [openaiProvider(llm.url)] });
  llm.queue({ json: openaiJson({ content: call('forbidden-write', { path: 'no.txt', content: 'x' }) }) }, { json: openaiJson({ content: msg('REPLY-denied') }) });
  const r = await chat(a, ['PROMPT-1']);
  assert.is(r.code, 0, r.stderr);
  assert.is(r.stdout, 'REPLY-denied\n');
  assert.is(readWs(a, 'no.txt'), undefined);
  const result = JSON.parse(convo(1).at(-1)!.content);
  assert.equal(result, { tool_result: { tool: 'forbidden-write', ok: false, error: { code: -32011, message: 'Policy denied: never' } } });
  const rec = auditRecords(a);
  assert.equal(auditKinds(rec), ['protocol.received', 'protocol.validated', 'capability.requested', 'authorization.decided', 'protocol.received', 'protocol.validated']);
  const dec = data(rec, 'authorization.decided')[0];
  assert.equal([dec.decision, dec.gate, dec.code, dec.message, dec.tool], ['deny', 'policy', -32011, 'Policy denied: never', 'forbidden-write']);
  assert.not.ok(auditKinds(rec).includes('execution.started'));
  const tc = telemetryEvents(a).find((e) => e.event === 'tool.call');
  assert.equal([tc.tool, tc.status, tc.code], ['forbidden-write', 'error', -32011]);
  assertNoBodies(a, ['PROMPT-1', 'REPLY-denied']);
});

test('a tool needing approval: the next input line answers; approved runs, denied feeds -32013 back', async () => {
  const a = makeAgent({ providers: [openaiProvider(llm.url)] });
  llm.queue(
    { json: openaiJson({ content: call('careful-write', { path: 'yes.txt', content: 'approved' }) }) },
    { json: openaiJson({ content: msg('REPLY-yes') }) },
    { json: openaiJson({ content: call('careful-write', { path: 'no.txt', content: 'denied' }) }) },
    { json: openaiJson({ content: msg('REPLY-no') }) },
  );
  const r = await chat(a, ['PROMPT-1', 'y', 'PROMPT-2', 'nope']);
  assert.is(r.code, 0, r.stderr);
  assert.equal(r.replies, ['REPLY-yes', 'REPLY-no']);
  // Piped: the question goes to stderr, stdout keeps one reply line per message.
  assert.is(
    r.stderr,
    'approval needed: tool careful-write {"path":"yes.txt","content":"approved"} (writes carefully) — approve? [y/N]\n' +
      'approval needed: tool careful-write {"path":"no.txt","content":"denied"} (writes carefully) — approve? [y/N]\n',
  );
  assert.is(readWs(a, 'yes.txt'), 'approved');
  assert.is(readWs(a, 'no.txt'), undefined);
  assert.equal(JSON.parse(convo(1).at(-1)!.content), { tool_result: { tool: 'careful-write', ok: true, content: 'wrote 8 bytes to yes.txt' } });
  const denied = JSON.parse(convo(3).at(-1)!.content).tool_result;
  assert.equal([denied.ok, denied.error.code], [false, -32013]);
  assert.match(denied.error.message, /denied on the CLI by tester/);
  // Nothing of the answer lines ("y", "nope") reached the model as a message.
  assert.equal(convo(3).filter((m) => m.role === 'user' && !m.content.startsWith('{')).map((m) => m.content), ['PROMPT-1', 'PROMPT-2']);
  const rec = auditRecords(a);
  assert.equal(data(rec, 'authorization.decided').map((d) => d.decision), ['require-approval', 'require-approval']);
  assert.equal(data(rec, 'approval.decided').map((d) => d.decision), ['passed', 'denied']);
  assert.equal(data(rec, 'execution.finished').map((d) => d.outcome), ['ok']);
  assert.equal(auditKinds(rec).filter((k) => k === 'execution.started').length, 1);
  assertNoBodies(a, ['PROMPT-', 'REPLY-']);
});

test('provider down, offline rules fallback: the rules answer, and a rules tool call runs', async () => {
  const rules = [
    'rules:',
    '  - match: "^hello"',
    '    message: "OFFLINE hello"',
    '  - match: "^echo (?<what>.+)$"',
    '    tool_call: { tool: echo, args: { text: "{{what}}" } }',
    'after_tool:',
    '  message: "Done: {{result}}"',
  ].join('\n');
  const a = makeAgent({
    providers: [
      openaiProvider(await deadUrl(), { fallback: [{ provider_ref: 'offline' }] }),
      { name: 'offline', protocol: 'custom', endpoint: 'file:rules.yaml', model: 'rules', auth: { type: 'none' } },
    ],
    files: { 'rules.yaml': rules },
  });
  const r = await chat(a, ['hello', 'echo ping']);
  assert.is(r.code, 0, r.stderr);
  assert.equal(r.replies, ['OFFLINE hello', 'Done: ping']);
  const rec = auditRecords(a);
  assert.equal(data(rec, 'protocol.received').map((d) => d.provider), ['offline', 'offline', 'offline']);
  assert.equal(data(rec, 'execution.finished').map((d) => [d.tool, d.outcome]), [['echo', 'ok']]);
});

test('a 429 is retried (Retry-After honoured) and the retry answers', async () => {
  const a = makeAgent({ providers: [openaiProvider(llm.url, { retry: { max_attempts: 2, initial_delay_ms: 5000 } })] });
  llm.queue({ status: 429, headers: { 'retry-after-ms': '50' }, json: { error: { type: 'rate_limit_exceeded', message: 'slow down' } } }, { json: openaiJson({ content: msg('REPLY-after-429') }) });
  const t0 = Date.now();
  const r = await chat(a, ['PROMPT-1']);
  assert.is(r.code, 0, r.stderr);
  assert.is(r.stdout, 'REPLY-after-429\n');
  assert.is(llm.requests.length, 2);
  assert.equal(llm.requests[1]!.body, llm.requests[0]!.body);
  assert.ok(Date.now() - t0 < 4500, 'the 50 ms Retry-After was used, not the 5 s backoff');
  assert.equal(auditKinds(auditRecords(a)), ['protocol.received', 'protocol.validated']);
});

test('a native OpenAI tool call becomes the tool_call form, runs, and is audited as that form', async () => {
  const a = makeAgent({ providers: [openaiProvider(llm.url)] });
  llm.queue(
    { json: openaiJson({ calls: [{ id: 'call_1', name: 'file-write', args: '{"path":"native.txt","content":"native"}' }] }) },
    { json: openaiJson({ content: msg('REPLY-native') }) },
  );
  const r = await chat(a, ['PROMPT-1']);
  assert.is(r.code, 0, r.stderr);
  assert.is(r.stdout, 'REPLY-native\n');
  assert.is(readWs(a, 'native.txt'), 'native');
  const form = '{"tool_call":{"tool":"file-write","args":{"path":"native.txt","content":"native"}}}';
  assert.equal(data(auditRecords(a), 'protocol.received').map((d) => d.output), [form, msg('REPLY-native')]);
  // The call goes back in the API's own form, its result as a `tool` message with the call's id.
  assert.equal(llm.requests[1]!.body.messages.slice(2), [
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'file-write', arguments: '{"path":"native.txt","content":"native"}' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: '{"tool_result":{"tool":"file-write","ok":true,"content":"wrote 6 bytes to native.txt"}}' },
  ]);
  // §2.5: the audit log has the provider's structured answer beside the protocol message built from it.
  assert.equal(JSON.parse(data(auditRecords(a), 'protocol.received')[0].provider_output).tool_calls, [{ name: 'file-write', arguments: '{"path":"native.txt","content":"native"}' }]);
  const received = telemetryEvents(a).filter((e) => e.event === 'protocol.received');
  assert.equal(received.map((e) => e.native_tool_call), [true, false]);
  assertNoBodies(a, ['PROMPT-1', 'REPLY-native']);
});

test('native mode: a plain-text answer (the way small models answer) is the reply, in one model call; the audit keeps both forms', async () => {
  const a = makeAgent({ providers: [openaiProvider(llm.url)] });
  llm.queue({ json: openaiJson({ content: 'Hello! I am your home assistant.\nHow can I help?' }) });
  const r = await chat(a, ['PROMPT-hi']);
  assert.is(r.code, 0, r.stderr);
  assert.equal(r.replies, ['Hello! I am your home assistant.\\nHow can I help?']);
  assert.is(llm.requests.length, 1);
  const [rec] = data(auditRecords(a), 'protocol.received');
  assert.equal([rec.output, rec.provider_output, rec.mode], [msg('Hello! I am your home assistant.\nHow can I help?'), 'Hello! I am your home assistant.\nHow can I help?', 'native']);
});

test('a missing model (Ollama 404) with an offline fallback: one line names the provider, URL, status and the server\'s words', async () => {
  const a = makeAgent({
    providers: [openaiProvider(llm.url, { name: 'ollama', fallback: [{ provider_ref: 'offline' }] }), { name: 'offline', protocol: 'custom', endpoint: 'file:rules.yaml', model: 'rules', auth: { type: 'none' } }],
    files: { 'rules.yaml': 'rules: []\ndefault:\n  message: "I am offline"\n' },
  });
  llm.queue({ status: 404, json: { error: { message: 'model "llama3.2:1b" not found, try pulling it first', type: 'api_error' } } });
  const r = await chat(a, ['PROMPT-1']);
  assert.is(r.code, 0, r.stderr);
  assert.equal(r.replies, ['I am offline']);
  assert.is(r.stderr, `note: provider ollama (${llm.url}/v1) failed: HTTP 404: model "llama3.2:1b" not found, try pulling it first; offline answered instead\n`);
});

test('several native tool calls in one response are rejected (several_tool_calls), none runs', async () => {
  const a = makeAgent({ providers: [openaiProvider(llm.url)] });
  llm.queue(
    {
      json: openaiJson({
        calls: [
          { id: 'call_1', name: 'file-write', args: '{"path":"one.txt","content":"1"}' },
          { id: 'call_2', name: 'file-write', args: '{"path":"two.txt","content":"2"}' },
        ],
      }),
    },
    { json: openaiJson({ content: msg('REPLY-one-at-a-time') }) },
  );
  const r = await chat(a, ['PROMPT-1']);
  assert.is(r.code, 0, r.stderr);
  assert.is(r.stdout, 'REPLY-one-at-a-time\n');
  assert.is(readWs(a, 'one.txt'), undefined);
  assert.is(readWs(a, 'two.txt'), undefined);
  assert.equal(convo(1).at(-1), {
    role: 'user',
    content: `Your previous output was rejected (structure: several_tool_calls): it held several tool calls; call exactly one tool per answer. ${NATIVE_SHAPE}${TOOLS}`,
  });
  const rec = auditRecords(a);
  assert.equal(data(rec, 'protocol.rejected').map((d) => [d.step, d.reason]), [['structure', 'several_tool_calls']]);
  assert.not.ok(auditKinds(rec).includes('capability.requested'));
});

test('anthropic-native: a tool_use block runs the tool, the text answer is the reply', async () => {
  const a = makeAgent({ providers: [{ name: 'fake-anthropic', protocol: 'anthropic-native', endpoint: llm.url, model: 'claude-fake', auth: { type: 'none' }, retry: { max_attempts: 1 } }] });
  llm.queue(
    { body: anthropicBodyText({ tool: { id: 'toolu_1', name: 'echo', inputRaw: '{"text":"from claude"}' }, usage: [50, 7] }) },
    { body: anthropicBodyText({ text: msg('REPLY-anthropic'), usage: [60, 4] }) },
  );
  const r = await chat(a, ['PROMPT-1']);
  assert.is(r.code, 0, r.stderr);
  assert.is(r.stdout, 'REPLY-anthropic\n');
  assert.is(llm.requests[0]!.url, '/v1/messages');
  assert.ok((llm.requests[0]!.body.system as string).includes('tool-calling interface'));
  assert.equal(llm.requests[1]!.body.messages, [
    { role: 'user', content: [{ type: 'text', text: 'PROMPT-1' }] },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'echo', input: { text: 'from claude' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '{"tool_result":{"tool":"echo","ok":true,"content":"from claude"}}' }] },
  ]);
  const rec = auditRecords(a);
  assert.equal(data(rec, 'execution.finished').map((d) => [d.tool, d.outcome]), [['echo', 'ok']]);
  assert.equal(
    telemetryEvents(a).filter((e) => e.event === 'metrics.token_usage').map((e) => [e.provider, e.input_tokens, e.output_tokens]),
    [['fake-anthropic', 50, 7], ['fake-anthropic', 60, 4]],
  );
  assertNoBodies(a, ['PROMPT-1', 'REPLY-anthropic']);
});

test('streaming: a tool call and a message arriving in SSE fragments cut mid-JSON', async () => {
  const a = makeAgent({ providers: [openaiProvider(llm.url, { streaming: true })] });
  llm.queue(
    { sse: openaiSse({ call: { id: 'call_1', name: 'file-write', fragments: ['{"path":"str', 'eam.txt","con', 'tent":"streamed"}'] }, usage: [30, 9] }) },
    { sse: openaiSse({ text: ['{"message":{"con', 'tent":"REPLY-str', 'eamed"}}'], usage: [40, 3] }) },
  );
  const r = await chat(a, ['PROMPT-1']);
  assert.is(r.code, 0, r.stderr);
  assert.is(r.stdout, 'REPLY-streamed\n');
  assert.is(readWs(a, 'stream.txt'), 'streamed');
  assert.is(llm.requests[0]!.body.stream, true);
  assert.equal(
    telemetryEvents(a).filter((e) => e.event === 'metrics.token_usage').map((e) => [e.input_tokens, e.output_tokens]),
    [[30, 9], [40, 3]],
  );
  assertNoBodies(a, ['PROMPT-1', 'REPLY-str']);
});

test('conversation memory: a second claw chat resumes the stored turns', async () => {
  const a = makeAgent({ providers: [openaiProvider(llm.url)], memory: true });
  llm.queue({ json: openaiJson({ content: msg('Hello Ada') }) });
  const r1 = await chat(a, ['my name is Ada']);
  assert.is(r1.code, 0, r1.stderr);
  assert.is(r1.stdout, 'Hello Ada\n');
  llm.queue({ json: openaiJson({ content: msg('You are Ada') }) });
  const r2 = await chat(a, ['what is my name?']);
  assert.is(r2.code, 0, r2.stderr);
  assert.is(r2.stdout, 'You are Ada\n');
  assert.equal(convo(1), [
    { role: 'user', content: 'my name is Ada' },
    { role: 'assistant', content: msg('Hello Ada') },
    { role: 'user', content: 'what is my name?' },
  ]);
  assertNoBodies(a, ['my name is Ada', 'Hello Ada', 'You are Ada', 'what is my name']);
});

test('skills: a tool call is held to the permissions of every skill requiring the tool; approval_required asks', async () => {
  const a = makeAgent({
    providers: [openaiProvider(llm.url)],
    skills: [
      // Neither is stricter in every respect: one forbids files, the other the network.
      { name: 'no-files', description: 'd', instruction: 'INSTR-no-files', tools_required: ['file-write'], permissions: { filesystem: 'none' } },
      { name: 'no-net', description: 'd', instruction: 'INSTR-no-net', tools_required: ['file-write'], permissions: { network: false, filesystem: 'full' } },
      { name: 'ask-echo', description: 'd', instruction: 'INSTR-ask', tools_required: ['echo'], permissions: { approval_required: true } },
    ],
  });
  llm.queue(
    { json: openaiJson({ content: call('file-write', { path: 'skill.txt', content: 'x' }) }) },
    { json: openaiJson({ content: msg('REPLY-1') }) },
    { json: openaiJson({ content: call('echo', { text: 'hi' }) }) },
    { json: openaiJson({ content: msg('REPLY-2') }) },
  );
  const r = await chat(a, ['PROMPT-1', 'PROMPT-2', 'n']);
  assert.is(r.code, 0, r.stderr);
  assert.equal(r.replies, ['REPLY-1', 'REPLY-2']);
  const system = llm.requests[0]!.body.messages[0].content as string;
  for (const i of ['INSTR-no-files', 'INSTR-no-net', 'INSTR-ask']) assert.ok(system.includes(i), i);
  // filesystem none (from no-files) holds although the call is attributed to no-net, the stricter by score.
  assert.is(readWs(a, 'skill.txt'), undefined);
  const denied = JSON.parse(convo(1).at(-1)!.content).tool_result;
  assert.equal([denied.tool, denied.ok, denied.error.code], ['file-write', false, -32010]);
  assert.is(r.stderr, 'approval needed: tool echo {"text":"hi"} (skill ask-echo requires approval (permissions.approval_required)) — approve? [y/N]\n');
  assert.equal(JSON.parse(convo(3).at(-1)!.content).tool_result.error.code, -32013);
  const rec = auditRecords(a);
  assert.equal(data(rec, 'capability.requested').map((d) => [d.tool, d.skill]), [['file-write', 'no-net'], ['echo', 'ask-echo']]);
  assert.equal(data(rec, 'approval.decided').map((d) => d.decision), ['denied']);
});

test('piped output stays one line per message: line breaks in a reply are written as \\n, control characters replaced', async () => {
  const a = makeAgent({ providers: [openaiProvider(llm.url)] });
  llm.queue({ json: openaiJson({ content: msg('line 1\nline 2\r\n\u001b[2Jcleared\u2028end\tC:\\dir') }) }, { json: openaiJson({ content: msg('second') }) });
  const r = await chat(a, ['PROMPT-1', 'PROMPT-2']);
  assert.is(r.code, 0, r.stderr);
  assert.is(r.stdout, 'line 1\\nline 2\\n\ufffd[2Jcleared\\nend\tC:\\dir\nsecond\n');
  assert.equal(r.replies.length, 2);
});

test('a manifest with tools but no Channel: Level 1, no tools offered, and the chat says why', async () => {
  const a = makeAgent({ providers: [openaiProvider(llm.url)], noChannel: true });
  llm.queue({ json: openaiJson({ content: call('echo', { text: 'x' }) }) }, { json: openaiJson({ content: msg('REPLY-1') }) });
  const r = await chat(a, ['PROMPT-1']);
  assert.is(r.code, 0, r.stderr);
  assert.is(r.stdout, 'REPLY-1\n');
  assert.is(r.stderr, 'note: the manifest declares tools but no Channel, so this agent runs at Level 1 without tools (spec §11); declare a cli channel to use them.\n');
  assert.is(llm.requests[0]!.body.tools, undefined);
  assert.ok((llm.requests[0]!.body.messages[0].content as string).includes('No tools are available'));
  // The echo call names no registered tool: rejected as unknown_tool, never executed.
  assert.equal(data(auditRecords(a), 'protocol.rejected').map((d) => d.reason), ['unknown_tool']);
});

for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  test(`${sig} during a turn whose model never answers: the turn is aborted and chat exits at once`, async () => {
    const a = makeAgent({ providers: [openaiProvider(llm.url)] });
    llm.queue({ hang: true });
    let sentAt = 0;
    const r = await chat(a, ['PROMPT-1', 'PROMPT-2'], {
      keepOpen: true,
      timeoutMs: 15000,
      whileRunning: (child) => {
        const poll = setInterval(() => {
          if (llm.requests.length === 0) return;
          clearInterval(poll);
          sentAt = Date.now();
          child.kill(sig);
        }, 20);
      },
    });
    assert.ok(sentAt > 0);
    assert.ok(Date.now() - sentAt < 5000, `exited ${Date.now() - sentAt} ms after ${sig}`);
    assert.is(r.code, 0, r.stderr);
    assert.is(r.stdout, '');
    // PROMPT-2 was already read into the input buffer: no turn starts after the signal.
    assert.is(llm.requests.length, 1);
    assert.equal(auditKinds(auditRecords(a)), []);
  });
}

test('an approval that expires does not swallow the next message', async () => {
  const rules = [
    { id: 'careful', action: 'require-approval', scope: 'all', conditions: { tool: 'careful-write' }, reason: 'quick', approval: { timeout_seconds: 1, default_if_timeout: 'deny' } },
    { id: 'rest', action: 'allow', scope: 'all' },
  ];
  const a = makeAgent({ providers: [openaiProvider(llm.url)], rules });
  llm.queue(
    { json: openaiJson({ content: call('careful-write', { path: 'late.txt', content: 'x' }) }) },
    { json: openaiJson({ content: msg('REPLY-1') }) },
    { json: openaiJson({ content: msg('REPLY-2') }) },
  );
  let out = '';
  const r = await chat(a, ['PROMPT-1'], {
    keepOpen: true,
    whileRunning: (child) => {
      child.stdout!.on('data', (c: Buffer) => {
        out += c.toString();
        // Typed after the approval expired and the turn answered: a message, not an approval answer.
        if (out === 'REPLY-1\n') child.stdin!.end('PROMPT-2\n');
      });
    },
  });
  assert.is(r.code, 0, r.stderr);
  assert.equal(r.replies, ['REPLY-1', 'REPLY-2']);
  assert.is(readWs(a, 'late.txt'), undefined);
  assert.equal(JSON.parse(convo(1).at(-1)!.content).tool_result.error.code, -32012);
  assert.equal(convo(2).at(-1), { role: 'user', content: 'PROMPT-2' });
  assert.is(
    r.stderr,
    'approval needed: tool careful-write {"path":"late.txt","content":"x"} (quick) — approve? [y/N]\napproval for tool careful-write is no longer open\n',
  );
});

test('on a terminal: a banner, a prompt per message, line breaks kept, control characters defused, approvals asked on the terminal', async () => {
  const a = makeAgent({ providers: [openaiProvider(llm.url)] });
  llm.queue(
    { json: openaiJson({ content: msg('first line\nsecond line \u001b[31mred') }) },
    { json: openaiJson({ content: call('careful-write', { path: 'tty.txt', content: 'typed' }) }) },
    { json: openaiJson({ content: msg('REPLY-2') }) },
  );
  const run = chatTty(a, ['PROMPT-1', 'PROMPT-2', 'yes', '/quit']);
  if (!run) return console.log('  (skipped: util-linux script is not installed)');
  const { code, out } = await run;
  assert.is(code, 0, out);
  const program = [
    'e2e-agent is listening. /quit to leave.',
    '> first line',
    'second line \ufffd[31mred',
    '> approval needed: tool careful-write {"path":"tty.txt","content":"typed"} (writes carefully) — approve? [y/N]',
    'REPLY-2',
    '> ',
  ].join('\r\n');
  const echoed = 'PROMPT-1\r\nPROMPT-2\r\nyes\r\n/quit\r\n';
  assert.is(out, echoed + program);
  assert.is(readWs(a, 'tty.txt'), 'typed');
});

for (const scope of ['per-channel', 'per-identity']) {
  test(`conversation memory in a ${scope} store: the chat starts, stores in its partition and resumes`, async () => {
    const a = makeAgent({ providers: [openaiProvider(llm.url)], memory: true, memoryScope: scope });
    llm.queue({ json: openaiJson({ content: msg('Noted') }) }, { json: openaiJson({ content: msg('Blue') }) });
    const r1 = await chat(a, ['my colour is blue']);
    assert.is(r1.code, 0, r1.stderr);
    assert.is(r1.stdout, 'Noted\n');
    const r2 = await chat(a, ['which colour?']);
    assert.is(r2.code, 0, r2.stderr);
    assert.is(r2.stdout, 'Blue\n');
    assert.equal(convo(1), [
      { role: 'user', content: 'my colour is blue' },
      { role: 'assistant', content: msg('Noted') },
      { role: 'user', content: 'which colour?' },
    ]);
  });
}

test.run();
