// The A2A JSON-RPC route on a real node:http server (docs/a2a.md "Methods"): what it refuses before a task
// exists. The happy paths are proven against the official SDK in test/e2e/a2a-*.test.ts.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type Server } from 'node:http';
import { a2aRpcRoute } from '../../src/a2a/rpc-route.ts';
import { TaskService } from '../../src/a2a/tasks.ts';
import { memoryTaskStore } from '../../src/a2a/task-store.ts';
import type { ChannelAgent } from '../../src/channels/types.ts';
import { captureLogger } from './helpers/fakes.ts';
import { openA2aAccess } from './helpers/a2a-open-access.ts';

const ACCESS = openA2aAccess();

let n = 0;
const agent: ChannelAgent = { channelTurns: true, turn: async (text) => ({ reply: `echo ${text}`, outcome: 'message', toolCalls: [], rejections: 0 }) };

async function serve(): Promise<{ url: string; turns: string[]; close(): Promise<void> }> {
  const turns: string[] = [];
  const counting: ChannelAgent = { channelTurns: true, turn: (text, signal, o) => (turns.push(text), agent.turn(text, signal, o)) };
  const tasks = new TaskService({ store: memoryTaskStore(), getAgent: () => counting, tools: false, newId: () => `id-${++n}`, now: () => 1_000, log: captureLogger(), access: () => ACCESS });
  await tasks.open();
  const route = a2aRpcRoute({ tasks: () => tasks, maxBodyBytes: 65536, requestTimeoutMs: 5_000 });
  const server: Server = createServer((req, res) => route.handle(req, res, { client: '127.0.0.1', loopback: true }));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/a2a`, turns, close: () => new Promise((r) => server.close(() => r())) };
}

// JSON text with a "\ud800" escape: JSON.parse turns it into a lone surrogate.
const post = (url: string, bodyText: string, version = '1.0') =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'a2a-version': version }, body: bodyText }).then(async (r) => ({ status: r.status, json: (await r.json()) as any }));

test('a lone surrogate anywhere in params is invalid params, and no turn runs', async () => {
  const s = await serve();
  try {
    const inText = String.raw`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi \ud800 there"}]}}}`;
    const r = await post(s.url, inText);
    assert.is(r.status, 200);
    assert.is(r.json.error.code, -32602);
    assert.match(r.json.error.message, /params\.message\.parts\.0\.text/);
    const inKey = String.raw`{"jsonrpc":"2.0","id":2,"method":"message/send","params":{"message":{"messageId":"m2","role":"user","parts":[{"kind":"text","text":"ok"}],"metadata":{"\udc00":1}}}}`;
    assert.is((await post(s.url, inKey, '')).json.error.code, -32602);
    assert.equal(s.turns, []);
    // A well-formed pair (an emoji) is fine.
    const pair = String.raw`{"jsonrpc":"2.0","id":3,"method":"SendMessage","params":{"message":{"messageId":"m3","role":"ROLE_USER","parts":[{"text":"\ud83d\ude00"}]}}}`;
    const ok = await post(s.url, pair);
    assert.is(ok.json.result.task.status.state, 'TASK_STATE_COMPLETED', JSON.stringify(ok.json));
    assert.equal(s.turns, ['\u{1F600}']);
  } finally {
    await s.close();
  }
});

test('an id that is not a string, a number or null is an invalid request (JSON-RPC 2.0 §4), and no turn runs', async () => {
  const s = await serve();
  try {
    for (const id of ['{}', '[1]', 'true']) {
      const r = await post(s.url, `{"jsonrpc":"2.0","id":${id},"method":"SendMessage","params":{"message":{"messageId":"m-${id}","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`);
      // Before: the message ran and its task was answered with id null, a reply no client can match.
      assert.equal([r.status, r.json.id, r.json.error?.code], [400, null, -32600], `id ${id}: ${JSON.stringify(r.json)}`);
    }
    assert.equal(s.turns, []);
  } finally {
    await s.close();
  }
});

test.run();
