// A2A streaming against the official client (@a2a-js/sdk) and dist/claw.mjs (docs/a2a.md "Streaming"): a streamed
// send, a slow tool whose stream waits for it, a client that drops the stream and resubscribes, the per-client
// stream cap and its release when clients go away, in A2A 1.0 and the SDK's 0.3 compatibility mode.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, RestTransportFactory, type Client } from '@a2a-js/sdk/client';
import { request } from './helpers/http-claw.ts';
import { a2aManifest, a2aRuntime, bearerFetch, startA2aAgent, type A2aAgent } from './helpers/a2a-agent.ts';
import { cardErrors } from './helpers/a2a-schema.ts';
import { sleep } from './helpers/e2e-util.ts';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const TOKEN = 'a2a-stream-token-51c0e2';

const MANIFEST = a2aManifest({
  name: 'a2a-stream',
  personality: 'You report on slow jobs.',
  spec: `  tools:
    - inline: { name: "hold", description: "Waits until the test lets it finish", input_schema: { type: "object" } }
`,
});
const RULES = `rules:
  - match: "^hold"
    tool_call: { tool: hold, args: {} }
  - match: "^hello"
    message: "Hello, streamed."
default:
  message: "No rule for that."
after_tool:
  message: "Held job done: {{result}}"
`;

/**
 * A claw whose `hold` tool runs until `release()` creates the gate file, or `close()` removes the gate: a hold
 * started just before the claw is killed must not outlive the test (a SIGKILLed runtime leaves its tools to
 * the next start's orphan sweep, and this data directory has no next start).
 */
async function start(): Promise<{ h: A2aAgent; base: string; release(): void; close(): Promise<void> }> {
  const gate = mkdtempSync(join(tmpdir(), 'claw-a2a-gate-'));
  const h = await startA2aAgent({
    manifest: MANIFEST,
    rules: RULES,
    // A dropped stream leaves its task running: the stream-cap test holds 5 turns, over the default 4 at once.
    config: a2aRuntime({ exec: { hold: `while [ -d ${gate} ] && [ ! -e ${gate}/go ]; do sleep 0.02; done; echo released` }, tools: true }).replace('a2a: { enabled: true', 'a2a: { enabled: true, max_concurrent_tasks: 16'),
    env: { A2A_TOKEN: TOKEN },
  });
  return {
    h,
    base: h.base,
    release: () => writeFileSync(join(gate, 'go'), ''),
    async close() {
      await h.stop();
      rmSync(gate, { recursive: true, force: true });
    },
  };
}

/** Every URL the SDK fetched: which binding it spoke. */
const seen: string[] = [];
const withToken = bearerFetch(TOKEN, seen);

async function client(base: string, o: { legacy?: boolean; rest?: boolean } = {}): Promise<Client> {
  const compat = o.legacy ? { legacyCompat: { enabled: true } } : {};
  const transport = o.rest ? new RestTransportFactory({ fetchImpl: withToken, ...compat }) : new JsonRpcTransportFactory({ fetchImpl: withToken, ...compat });
  const f = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [transport],
      ...(o.rest ? { preferredTransports: ['HTTP+JSON'] } : {}),
      cardResolver: new DefaultAgentCardResolver({ fetchImpl: withToken, ...compat }),
    }),
  );
  if (!o.legacy) return f.createFromUrl(base);
  // The card's 0.3 interfaces only: what a 0.3 client would pick.
  const card: any = await (await f.createFromUrl(base)).getAgentCard();
  const binding = o.rest ? 'HTTP+JSON' : 'JSONRPC';
  return f.createFromAgentCard({ ...card, supportedInterfaces: card.supportedInterfaces.filter((i: any) => i.protocolVersion === '0.3' && i.protocolBinding === binding) });
}

const text = (t: string): any => ({
  tenant: '',
  configuration: undefined,
  metadata: undefined,
  message: { messageId: crypto.randomUUID(), contextId: '', taskId: '', role: 1, parts: [{ content: { $case: 'text' as const, value: t }, metadata: undefined, filename: '', mediaType: '' }], metadata: undefined, extensions: [], referenceTaskIds: [] },
});
/** `task` / `statusUpdate` / `artifactUpdate`, with the state where there is one. */
const shape = (e: any): string => {
  const v = e.payload.value;
  if (e.payload.$case === 'artifactUpdate') return `artifact:${v.artifact.parts[0].content.value}`;
  return `${e.payload.$case}:${(v.status ?? {}).state}`;
};
const WORKING = 2;
const COMPLETED = 3;

async function collect(it: AsyncIterable<any>): Promise<any[]> {
  const out: any[] = [];
  for await (const e of it) out.push(e);
  return out;
}

/** Streamed send with a slow tool, then a drop and a resubscribe, through one SDK client. */
async function slowToolAndResubscribe(c: Client, release: () => void): Promise<void> {
  // A quick turn: the Task, then (if it had not finished before the snapshot) its artifact and final status.
  const quick = await collect(c.sendMessageStream(text('hello')));
  assert.is(quick[0].payload.$case, 'task');
  assert.is(quick.at(-1).payload.value.status.state, COMPLETED, JSON.stringify(quick));

  // A slow tool: the stream opens at `working` and waits; the client drops it (a reconnect) and resubscribes.
  const drop = new AbortController();
  const it = c.sendMessageStream(text('hold'), { signal: drop.signal })[Symbol.asyncIterator]();
  const first: any = (await it.next()).value;
  assert.is(shape(first), `task:${WORKING}`);
  const id = first.payload.value.id;
  drop.abort();
  await it.return?.().catch(() => {});
  const again = c.resubscribeTask({ id, tenant: '' })[Symbol.asyncIterator]();
  const snapshot: any = (await again.next()).value;
  assert.is(snapshot.payload.value.id, id);
  assert.is(shape(snapshot), `task:${WORKING}`);
  release();
  const rest: any[] = [];
  for (let r = await again.next(); !r.done; r = await again.next()) rest.push(r.value);
  assert.equal(rest.map(shape), ['artifact:Held job done: released\n', `statusUpdate:${COMPLETED}`]);
  // The task is finished: nothing more to stream.
  let refused: any;
  await collect(c.resubscribeTask({ id, tenant: '' })).catch((e) => (refused = e));
  assert.ok(refused, 'a finished task cannot be resubscribed');
}

test('A2A 1.0 over JSON-RPC: streamed send, a slow tool, a dropped stream resubscribed', async () => {
  const s = await start();
  try {
    // The card served, in each version's shape, is valid under that version's A2A JSON Schema.
    const url = `${s.base}/.well-known/agent-card.json`;
    const v10 = await request(url, { method: 'GET', headers: { 'a2a-version': '1.0' } });
    assert.equal(cardErrors(v10.json, '1.0'), []);
    assert.is(v10.json.capabilities.streaming, true);
    assert.equal(v10.json.supportedInterfaces.map((i: any) => `${i.protocolBinding} ${i.protocolVersion} ${i.url}`), [`JSONRPC 1.0 ${s.base}/a2a`, `HTTP+JSON 1.0 ${s.base}/a2a`, `JSONRPC 0.3 ${s.base}/a2a`]);
    const v03 = await request(url, { method: 'GET' });
    assert.equal(cardErrors(v03.json, '0.3'), []);
    assert.equal([v03.json.protocolVersion, v03.json.url, v03.json.preferredTransport], ['0.3.0', `${s.base}/a2a`, 'JSONRPC']);
    assert.is(v03.headers['vary'], 'A2A-Version');
    const c = await client(s.base);
    await slowToolAndResubscribe(c, s.release);
  } finally {
    await s.close();
  }
});

test('A2A 0.3 (the SDK compatibility transport): message/stream, tasks/resubscribe', async () => {
  const s = await start();
  try {
    const c = await client(s.base, { legacy: true });
    assert.is(c.protocolVersion, '0.3');
    await slowToolAndResubscribe(c, s.release);
  } finally {
    await s.close();
  }
});

test('A2A 1.0 over HTTP+JSON (the SDK REST transport): streamed send, resubscribe, get, list, cancel; credentials', async () => {
  const s = await start();
  try {
    const c = await client(s.base, { rest: true });
    seen.length = 0;
    await slowToolAndResubscribe(c, s.release);
    const paths = seen.map((u) => u.replace(s.base, '').replace(/\/tasks\/[^/:?]+/, '/tasks/ID'));
    assert.ok(paths.includes('POST /a2a/message:stream') && paths.includes('POST /a2a/tasks/ID:subscribe'), paths.join('\n'));
    assert.not.ok(paths.includes('POST /a2a'), 'the JSON-RPC endpoint is not used');
    const sent: any = await c.sendMessage(text('hello'));
    assert.is(sent.status.state, COMPLETED);
    const got: any = await c.getTask({ id: sent.id, historyLength: 1, tenant: '' });
    assert.is(got.id, sent.id);
    assert.is(got.history.length, 1);
    const listed: any = await c.listTasks({ tenant: '', contextId: sent.contextId, status: 0, pageSize: 10, pageToken: '', historyLength: 0, statusTimestampAfter: undefined, includeArtifacts: false } as any);
    assert.equal(listed.tasks.map((t: any) => t.id), [sent.id]);
    let notCancelable: any;
    await c.cancelTask({ id: sent.id, tenant: '', metadata: undefined } as any).catch((e) => (notCancelable = e));
    assert.is(notCancelable?.name, 'TaskNotCancelableError', String(notCancelable));
    let notFound: any;
    await c.getTask({ id: 'no-such-task', tenant: '' } as any).catch((e) => (notFound = e));
    assert.is(notFound?.name, 'TaskNotFoundError', String(notFound));
    // Same credentials as the JSON-RPC route: none or a wrong one → 401, nothing runs.
    for (const headers of [{}, { authorization: 'Bearer wrong' }] as Record<string, string>[]) {
      const r = await fetch(`${s.base}/a2a/message:send`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hello' }] } }) });
      assert.is(r.status, 401);
      assert.is((await fetch(`${s.base}/a2a/tasks/${sent.id}`, { headers })).status, 401);
    }
  } finally {
    await s.close();
  }
});

test('streams per client are capped; clients that go away give their streams back', async () => {
  const s = await start();
  try {
    const c = await client(s.base);
    const drops = Array.from({ length: 4 }, () => new AbortController());
    const its = drops.map((d) => c.sendMessageStream(text('hold'), { signal: d.signal })[Symbol.asyncIterator]());
    for (const it of its) assert.is(shape((await it.next()).value), `task:${WORKING}`);
    let refused: any;
    await collect(c.sendMessageStream(text('hold'))).catch((e) => (refused = e));
    assert.ok(refused, 'a fifth stream from the same client is refused');
    for (const d of drops) d.abort();
    for (const it of its) await it.return?.().catch(() => {});
    // The server sees the connections close and frees the slots: a new stream opens.
    const end = Date.now() + 5_000;
    let reopened: any;
    while (!reopened && Date.now() < end) {
      reopened = await c.sendMessageStream(text('hold'))[Symbol.asyncIterator]().next().catch(() => undefined);
      if (!reopened) await sleep(50);
    }
    assert.ok(reopened, 'a stream opens again once the dropped ones are gone');
    s.release();
  } finally {
    await s.close();
  }
});

test.run();
