// How many agent turns A2A callers can run at once (docs/a2a.md "Limits", a2a.max_concurrent_tasks), through the
// official A2A client (@a2a-js/sdk) against the real JSON-RPC route and agent card: while the limit's worth of
// turns run, one more message (blocking, non-blocking or streamed) is refused with HTTP 429 / JSON-RPC -32603 and
// leaves no task behind; once a turn ends, the next message runs.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type Server } from 'node:http';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { TaskService } from '../../src/a2a/tasks.ts';
import { memoryTaskStore } from '../../src/a2a/task-store.ts';
import { StreamSlots } from '../../src/a2a/stream.ts';
import { a2aRpcRoute } from '../../src/a2a/rpc-route.ts';
import { buildAgentCard } from '../../src/a2a/card.ts';
import { AGENT_CARD_PATH, agentCardRoute } from '../../src/a2a/card-route.ts';
import type { RouteContext } from '../../src/transports/http/server.ts';
import { captureLogger, deferred, makeManifest, primitive } from './helpers/fakes.ts';
import { openA2aAccess } from './helpers/a2a-open-access.ts';

let n = 0;
const newId = () => `id-${++n}`;

async function serve(maxConcurrent: number) {
  const holds: ((r: string) => void)[] = [];
  let turns = 0;
  const tasks = new TaskService({
    store: memoryTaskStore(),
    getAgent: () => ({
      channelTurns: true,
      async turn(t) {
        turns++;
        if (!t.startsWith('hold')) return { reply: 'ok', outcome: 'message', toolCalls: [], rejections: 0 };
        const d = deferred<string>();
        holds.push(d.resolve);
        return { reply: await d.promise, outcome: 'message', toolCalls: [], rejections: 0 };
      },
    }),
    tools: false,
    newId,
    now: () => Date.now(),
    log: captureLogger(),
    access: () => openA2aAccess(),
    maxConcurrent,
  });
  await tasks.open();
  const rpc = a2aRpcRoute({ tasks: () => tasks, slots: new StreamSlots(), maxBodyBytes: 65536, requestTimeoutMs: 5_000 });
  const manifest = makeManifest(1, { identity: primitive('Identity', 'edge', { personality: 'You watch the greenhouse.' }) });
  let base = '';
  const card = agentCardRoute(() => buildAgentCard(manifest, { endpointUrl: `${base}/a2a`, runtimeVersion: '0.1.0', security: { bearer: false, clientCert: false } }));
  const ctx: RouteContext = { client: '127.0.0.1', loopback: true };
  const server: Server = createServer((req, res) => (req.url === AGENT_CARD_PATH ? card : rpc).handle(req, res, ctx));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const f = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl: fetch })], cardResolver: new DefaultAgentCardResolver({ fetchImpl: fetch }) }));
  const client: Client = await f.createFromUrl(base);
  return {
    client,
    tasks,
    holds,
    turns: () => turns,
    async close() {
      for (const h of holds) h('done');
      await tasks.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

const text = (t: string, configuration?: unknown): any => ({
  tenant: '',
  configuration,
  metadata: undefined,
  message: { messageId: crypto.randomUUID(), contextId: '', taskId: '', role: 1, parts: [{ content: { $case: 'text' as const, value: t }, metadata: undefined, filename: '', mediaType: '' }], metadata: undefined, extensions: [], referenceTaskIds: [] },
});
const refusal = (p: Promise<unknown>) => p.then(() => undefined, (e: Error) => e);
const until = async (ok: () => boolean, ms = 3_000) => {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
};

test('the official client: over a2a.max_concurrent_tasks running turns, a message is refused (-32603, retry later) and no task is created; after one ends the next runs', async () => {
  const s = await serve(2);
  try {
    // Two turns that hold: one streamed, one non-blocking send.
    const it = s.client.sendMessageStream(text('hold one'))[Symbol.asyncIterator]();
    const first: any = (await it.next()).value;
    assert.is(first.payload.$case, 'task');
    await s.client.sendMessage(text('hold two', { acceptedOutputModes: [], pushNotificationConfig: undefined, historyLength: undefined, returnImmediately: true }));
    await until(() => s.holds.length === 2);
    assert.is(s.tasks.list().totalSize, 2);

    // A third caller's message, blocking, non-blocking or streamed: refused, before any turn or task.
    const over: (() => Promise<unknown>)[] = [
      () => s.client.sendMessage(text('hi')),
      () => s.client.sendMessage(text('hold three', { acceptedOutputModes: [], returnImmediately: true })),
      async () => {
        for await (const _ of s.client.sendMessageStream(text('hold four'))) break;
      },
    ];
    for (const send of over) {
      const p = send();
      const e = await refusal(p);
      assert.ok(e, 'a message over the limit was run');
      assert.is((e as { envelopeCode?: number }).envelopeCode, -32603, 'the SDK reads a JSON-RPC internal error');
      assert.match(String(e?.message), /too many tasks running \(a2a\.max_concurrent_tasks: 2\)/);
    }
    assert.is(s.turns(), 2, 'no third turn started');
    assert.is(s.tasks.list().totalSize, 2, 'no task half created by a refused message');

    // One ends: the next message runs to its end.
    s.holds[0]('released');
    for (let r = await it.next(); !r.done; r = await it.next());
    const ok: any = await s.client.sendMessage(text('hi'));
    assert.is(ok.status.state, 3 /* COMPLETED */);
    assert.is(s.tasks.list().totalSize, 3);
  } finally {
    await s.close();
  }
});

test('the operator (claw.task.create, no caller) is not refused by the limit', async () => {
  const s = await serve(1);
  try {
    await s.tasks.create({ role: 'user', messageId: newId(), parts: [{ type: 'text', text: 'hold op' }] }, { wait: false, caller: 'local' });
    const t = await s.tasks.create({ role: 'user', messageId: newId(), parts: [{ type: 'text', text: 'status' }] }, { wait: true });
    assert.is(t.state, 'completed');
  } finally {
    await s.close();
  }
});

test.run();
