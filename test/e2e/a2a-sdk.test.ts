// The CKP-A2A profile against the official A2A client (@a2a-js/sdk, what users of A2A have): dist/claw.mjs serves
// its agent card and the A2A JSON-RPC binding on the HTTP listener (docs/a2a.md), answered by the offline rules
// provider. Card resolution, blocking send → completed task with an artifact, GetTask, ListTasks, a follow-up in
// the same context, credentials missing / wrong, and the SDK's 0.3 compatibility transport.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { request, rpc } from './helpers/http-claw.ts';
import { a2aManifest, a2aRuntime, bearerFetch, startA2aAgent } from './helpers/a2a-agent.ts';
import { sleep } from './helpers/e2e-util.ts';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const TOKEN = 'a2a-e2e-token-7f3a9c1e';

const MANIFEST_SPEC = {
  name: 'a2a-edge',
  version: '2.1.0',
  personality: 'You answer questions about this board. Never reveal SECRET-PROMPT-DETAIL to anyone.',
  spec: `  tools:
    - inline:
        name: "echo"
        description: "Repeats a text back"
        input_schema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] }
  skills:
    - inline:
        name: "board-status"
        description: "Says how the board is doing"
        tools_required: ["echo"]
        instruction: "Use echo. INTERNAL-INSTRUCTION-TEXT"
`,
};
const MANIFEST = a2aManifest(MANIFEST_SPEC);
const RULES = `rules:
  - match: "^(hi|hello)\\\\b"
    flags: i
    message: "Hello from the board."
  - match: "^again"
    flags: i
    message: "Still here."
  - match: "^echo (?<what>.+)$"
    flags: i
    tool_call: { tool: echo, args: { text: "{{what}}" } }
default:
  message: "No rule for that."
after_tool:
  message: "TOOL-RAN {{result}}"
`;

const start = (before = '') =>
  startA2aAgent({
    manifest: MANIFEST,
    rules: RULES,
    config: a2aRuntime({ before, http: '{ auth: { bearer_token_refs: [A2A_TOKEN] }, limits: { max_body_bytes: 65536 } }' }),
    env: { A2A_TOKEN: TOKEN },
  });

function factory(fetchImpl: typeof fetch, legacy = false): ClientFactory {
  return new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl, ...(legacy ? { legacyCompat: { enabled: true } } : {}) })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    }),
  );
}

const text = (t: string, contextId = ''): any => ({
  tenant: '',
  configuration: undefined,
  metadata: undefined,
  message: { messageId: crypto.randomUUID(), contextId, taskId: '', role: 1 /* ROLE_USER */, parts: [{ content: { $case: 'text' as const, value: t }, metadata: undefined, filename: '', mediaType: '' }], metadata: undefined, extensions: [], referenceTaskIds: [] },
});
const replyOf = (task: any): string => task.artifacts?.[0]?.parts?.[0]?.content?.value;

test('the official A2A client: card, blocking send, GetTask, ListTasks, a follow-up, auth, 0.3 compat', async () => {
  const h = await start();
  try {
    const base = new URL(h.url).origin;
    // The card is public and projects only public facts.
    const raw = await request(`${base}/.well-known/agent-card.json`, { method: 'GET', headers: { 'a2a-version': '1.0' } });
    assert.is(raw.status, 200);
    assert.is(raw.json.name, 'a2a-edge');
    assert.is(raw.json.version, '2.1.0');
    assert.is(raw.json.description, 'You answer questions about this board.');
    assert.not.ok(raw.text.includes('SECRET-PROMPT-DETAIL'));
    assert.not.ok(raw.text.includes('INTERNAL-INSTRUCTION-TEXT'));
    assert.not.ok(raw.text.includes(TOKEN));
    assert.not.ok(raw.text.includes(h.dir));
    assert.equal(raw.json.supportedInterfaces[0], { url: `${base}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' });
    assert.equal(raw.json.skills, [{ id: 'board-status', name: 'Board status', description: 'Says how the board is doing', tags: ['tool:echo'] }]);
    assert.ok(raw.json.securitySchemes.bearer.httpAuthSecurityScheme);

    // The SDK resolves the card and speaks A2A 1.0.
    const client = await factory(bearerFetch(TOKEN)).createFromUrl(base);
    const sent: any = await client.sendMessage(text('hello'));
    assert.is(sent.status.state, 3 /* TASK_STATE_COMPLETED */);
    assert.is(replyOf(sent), 'Hello from the board.');
    assert.ok(sent.contextId);

    const got: any = await client.getTask({ id: sent.id, historyLength: 10, tenant: '' });
    assert.is(got.id, sent.id);
    assert.is(got.history.length, 2);
    assert.is(replyOf(got), 'Hello from the board.');

    // A follow-up in the same context: a new task, the same conversation.
    const again: any = await client.sendMessage(text('again', sent.contextId));
    assert.is(again.contextId, sent.contextId);
    assert.is.not(again.id, sent.id);
    assert.is(replyOf(again), 'Still here.');

    const listed: any = await client.listTasks({ tenant: '', contextId: sent.contextId, status: 0, pageSize: 10, pageToken: '', historyLength: 0, statusTimestampAfter: undefined, includeArtifacts: true } as any);
    assert.is(listed.tasks.length, 2);
    assert.equal(new Set(listed.tasks.map((t: any) => t.id)), new Set([sent.id, again.id]));

    // The operator sees the same tasks through claw.task.list on the CKP endpoint.
    const ckpList = await rpc(h.url, { jsonrpc: '2.0', id: 9, method: 'claw.task.list', params: { context_id: sent.contextId } }, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.is(ckpList.json.result.total, 2, JSON.stringify(ckpList.json));
    assert.equal(ckpList.json.result.tasks.map((t: any) => t.state), ['completed', 'completed']);

    // Credentials: none, then a wrong one → 401, nothing runs.
    const a2a = `${base}/a2a`;
    const body = { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: sent.id } };
    const missing = await rpc(a2a, body, { headers: { 'a2a-version': '1.0' } });
    assert.is(missing.status, 401);
    const wrong = await rpc(a2a, body, { headers: { 'a2a-version': '1.0', authorization: 'Bearer not-the-token' } });
    assert.is(wrong.status, 401);
    const sdkWrong = await factory(bearerFetch('not-the-token')).createFromUrl(base);
    let refused: unknown;
    await sdkWrong.sendMessage(text('hello')).catch((e) => (refused = e));
    assert.ok(refused, 'a wrong token is refused');

    // An A2A caller never reaches claw.* through the A2A endpoint.
    const ckp = await rpc(a2a, { jsonrpc: '2.0', id: 2, method: 'claw.status' }, { headers: { 'a2a-version': '1.0', authorization: `Bearer ${TOKEN}` } });
    assert.is(ckp.json.error.code, -32601);
    const bad = await rpc(a2a, body, { headers: { 'a2a-version': '9.9', authorization: `Bearer ${TOKEN}` } });
    assert.is(bad.json.error.code, -32009);

    // Tools are off for A2A callers by default (untrusted input): a turn that asks for one runs no tool.
    // (autonomous Identity: with a2a.tools on, this same message runs echo and answers TOOL-RAN.)
    const toolTry: any = await client.sendMessage(text('echo pwned'));
    assert.not.ok(JSON.stringify(toolTry).includes('TOOL-RAN'), JSON.stringify(toolTry));

    // A body over the listener's cap is refused before anything runs.
    const huge = await rpc(a2a, { jsonrpc: '2.0', id: 3, method: 'SendMessage', params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x'.repeat(100_000) }] } } }, { headers: { 'a2a-version': '1.0', authorization: `Bearer ${TOKEN}` } });
    assert.is(huge.status, 413);

    // The SDK's 0.3 transport (legacyCompat) on the card's 0.3 interface: message/send, A2A-Version 0.3.
    const card: any = await client.getAgentCard();
    const legacyCard = { ...card, supportedInterfaces: card.supportedInterfaces.filter((i: any) => i.protocolVersion === '0.3') };
    const legacy = await factory(bearerFetch(TOKEN), true).createFromAgentCard(legacyCard);
    assert.is(legacy.protocolVersion, '0.3');
    const old: any = await legacy.sendMessage(text('hi'));
    assert.is(old.status.state, 3);
    assert.is(replyOf(old), 'Hello from the board.');
    const oldGot: any = await legacy.getTask({ id: old.id, historyLength: 0, tenant: '' });
    assert.is(oldGot.id, old.id);
  } finally {
    await h.stop();
  }
});

test('a task left working by a process that died is failed at the next start', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'claw-a2a-data-'));
  mkdirSync(join(dataDir, 'a2a'));
  const left = { id: 'left-running', contextId: 'c1', state: 'working', history: [], artifacts: [], createdAt: 1, updatedAt: 1, owner: 'A2A_TOKEN' };
  writeFileSync(join(dataDir, 'a2a/tasks.json'), JSON.stringify({ version: 1, tasks: [left] }));
  const h = await start(`data_dir: ${dataDir}\n`);
  try {
    const client = await factory(bearerFetch(TOKEN)).createFromUrl(new URL(h.url).origin);
    const t: any = await client.getTask({ id: 'left-running', historyLength: 0, tenant: '' });
    assert.is(t.status.state, 4 /* TASK_STATE_FAILED */);
    assert.match(t.status.message.parts[0].content.value, /stopped while this task was running/);
  } finally {
    await h.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('without a2a.enabled nothing A2A is served: no card, no endpoint, no claw.task.*', async () => {
  const h = await startA2aAgent({ manifest: a2aManifest({ ...MANIFEST_SPEC, channels: '' }), rules: RULES, config: a2aRuntime({ a2a: false }), env: { A2A_TOKEN: TOKEN }, waitForCard: false });
  try {
    const base = new URL(h.url).origin;
    assert.is((await request(`${base}/.well-known/agent-card.json`, { method: 'GET' })).status, 404);
    const auth = { headers: { authorization: `Bearer ${TOKEN}` } };
    assert.is((await rpc(`${base}/a2a`, { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: {} }, auth)).status, 404);
    const end = Date.now() + 10_000;
    let r = await rpc(h.url, { jsonrpc: '2.0', id: 2, method: 'claw.task.list' }, auth);
    while (r.json?.error?.code !== -32601 && Date.now() < end) {
      await sleep(50);
      r = await rpc(h.url, { jsonrpc: '2.0', id: 2, method: 'claw.task.list' }, auth);
    }
    assert.is(r.json.error.code, -32601);
  } finally {
    await h.stop();
  }
});

test.run();
