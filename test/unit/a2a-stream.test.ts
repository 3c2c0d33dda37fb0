// Task streams over the A2A JSON-RPC route on a real node:http server (docs/a2a.md "Streaming"): the event order in
// both dialects, the end at a terminal state, SubscribeToTask rules, the per-client cap, a client that goes away,
// a client that stops reading, keep-alive comments.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { a2aRpcRoute } from '../../src/a2a/rpc-route.ts';
import { StreamSlots, streamLimitsFor, type StreamLimits } from '../../src/a2a/stream.ts';
import { TaskService } from '../../src/a2a/tasks.ts';
import { memoryTaskStore } from '../../src/a2a/task-store.ts';
import type { ChannelAgent } from '../../src/channels/types.ts';
import { captureLogger, deferred, until } from './helpers/fakes.ts';
import { openA2aAccess } from './helpers/a2a-open-access.ts';

const ACCESS = openA2aAccess();

let n = 0;

/** Each turn waits for the test to release it with the reply. */
function gatedAgent() {
  const gates: { text: string; reply(r: string): void }[] = [];
  const agent: ChannelAgent = {
    channelTurns: true,
    async turn(text) {
      const g = deferred<string>();
      gates.push({ text, reply: g.resolve });
      return { reply: await g.promise, outcome: 'message', toolCalls: [], rejections: 0 };
    },
  };
  return { agent, gates };
}

async function serve(limits: Partial<StreamLimits> = {}) {
  const { agent, gates } = gatedAgent();
  const tasks = new TaskService({ store: memoryTaskStore(), getAgent: () => agent, tools: false, newId: () => `id-${++n}`, now: () => Date.now(), log: captureLogger(), access: () => ACCESS });
  await tasks.open();
  const slots = new StreamSlots({ perCaller: 2, total: 8, keepaliveMs: 15_000, maxBufferedBytes: 64 * 1024, ...limits });
  const route = a2aRpcRoute({ tasks: () => tasks, slots, maxBodyBytes: 65536, requestTimeoutMs: 5_000 });
  const server: Server = createServer((req, res) => route.handle(req, res, { client: '127.0.0.1', loopback: true }));
  const sockets: import('node:net').Socket[] = [];
  server.on('connection', (c) => sockets.push(c));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    sockets,
    url: `http://127.0.0.1:${port}/a2a`,
    port,
    tasks,
    slots,
    gates,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

const rpc = (method: string, params: unknown, id: number | string = 1) => JSON.stringify({ jsonrpc: '2.0', id, method, params });
const sendParams = (text: string, v: '1.0' | '0.3') => ({ message: { messageId: `m-${++n}`, role: v === '1.0' ? 'ROLE_USER' : 'user', parts: [v === '1.0' ? { text } : { kind: 'text', text }] } });

function open(url: string, body: string, v: '1.0' | '0.3', signal?: AbortSignal) {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...(v === '1.0' ? { 'a2a-version': '1.0' } : {}) }, body, signal });
}

/** The `data:` payloads of a stream, read as they arrive; `done` resolves at its end. */
function events(r: Response) {
  const got: any[] = [];
  let raw = '';
  const done = (async () => {
    const dec = new TextDecoder();
    for await (const chunk of r.body as any as AsyncIterable<Uint8Array>) {
      raw += dec.decode(chunk, { stream: true });
      let i;
      while ((i = raw.indexOf('\n\n')) >= 0) {
        const block = raw.slice(0, i);
        raw = raw.slice(i + 2);
        for (const line of block.split('\n')) if (line.startsWith('data: ')) got.push(JSON.parse(line.slice(6)));
      }
    }
  })();
  return { got, done };
}

test('SendStreamingMessage (1.0): the Task first, then the artifact, then the terminal status; the stream ends', async () => {
  const s = await serve();
  try {
    const r = await open(s.url, rpc('SendStreamingMessage', sendParams('hello', '1.0'), 'req-7'), '1.0');
    assert.is(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /^text\/event-stream/);
    const ev = events(r);
    await until(() => ev.got.length === 1 && s.gates.length === 1);
    assert.is(ev.got[0].id, 'req-7');
    assert.is(ev.got[0].result.task.status.state, 'TASK_STATE_WORKING');
    const taskId = ev.got[0].result.task.id;
    assert.is(s.slots.open('local'), 1);
    s.gates[0].reply('hi there');
    await ev.done;
    assert.equal(
      ev.got.map((e) => Object.keys(e.result)[0]),
      ['task', 'artifactUpdate', 'statusUpdate'],
    );
    assert.equal(ev.got[1].result.artifactUpdate.artifact.parts, [{ text: 'hi there' }]);
    assert.is(ev.got[1].result.artifactUpdate.taskId, taskId);
    assert.is(ev.got[2].result.statusUpdate.status.state, 'TASK_STATE_COMPLETED');
    assert.ok(ev.got.every((e) => e.jsonrpc === '2.0' && e.id === 'req-7'));
    await until(() => s.slots.open() === 0);
  } finally {
    await s.close();
  }
});

test('message/stream (0.3): kinds, final on the last status update; tasks/resubscribe from another connection', async () => {
  const s = await serve();
  try {
    const first = events(await open(s.url, rpc('message/stream', sendParams('one', '0.3')), '0.3'));
    await until(() => first.got.length === 1);
    assert.is(first.got[0].result.kind, 'task');
    assert.is(first.got[0].result.status.state, 'working');
    const id = first.got[0].result.id;
    // A second client follows the same task: it starts with the Task as it is now.
    const again = events(await open(s.url, rpc('tasks/resubscribe', { id }, 2), '0.3'));
    await until(() => again.got.length === 1);
    assert.is(again.got[0].result.id, id);
    s.gates[0].reply('done');
    await Promise.all([first.done, again.done]);
    for (const ev of [first, again]) {
      assert.equal(ev.got.slice(1).map((e) => e.result.kind), ['artifact-update', 'status-update']);
      assert.is(ev.got[2].result.final, true);
      assert.is(ev.got[2].result.status.state, 'completed');
    }
    // A finished task has nothing more to stream: UnsupportedOperation, as JSON (no stream opened).
    const late = await open(s.url, rpc('tasks/resubscribe', { id }, 3), '0.3');
    assert.match(late.headers.get('content-type') ?? '', /application\/json/);
    assert.is(((await late.json()) as any).error.code, -32004);
    const unknown = (await (await open(s.url, rpc('SubscribeToTask', { id: 'nope' }), '1.0')).json()) as any;
    assert.is(unknown.error.code, -32001);
  } finally {
    await s.close();
  }
});

/** Two streams that open (200), then a third: the caller gets its response and the first two's aborts. */
async function twoStreamsThenOne(url: string) {
  const aborts = [new AbortController(), new AbortController()];
  const streams = await Promise.all(aborts.map((a) => open(url, rpc('SendStreamingMessage', sendParams('x', '1.0')), '1.0', a.signal)));
  assert.ok(streams.every((r) => r.status === 200));
  return { aborts, over: await open(url, rpc('SendStreamingMessage', sendParams('y', '1.0')), '1.0') };
}

test('streams take at most half of a listener\'s connections (max_connections 4: the third stream is 429)', async () => {
  assert.equal([streamLimitsFor(128).total, streamLimitsFor(16).total, streamLimitsFor(4).total, streamLimitsFor(1).total], [32, 8, 2, 1]);
  const s = await serve({ ...streamLimitsFor(4), perCaller: 4 });
  try {
    const { aborts, over } = await twoStreamsThenOne(s.url);
    assert.is(over.status, 429);
    await over.body?.cancel();
    for (const a of aborts) a.abort();
    await until(() => s.slots.open() === 0);
    for (const g of s.gates) g.reply('late');
  } finally {
    await s.close();
  }
});

test('streams per caller are capped (429); a client that goes away gives its slot back and is unsubscribed', async () => {
  const s = await serve();
  try {
    const { aborts, over } = await twoStreamsThenOne(s.url);
    assert.is(over.status, 429);
    assert.is(over.headers.get('retry-after'), '5');
    assert.is(((await over.json()) as any).error.code, -32603);
    await until(() => s.gates.length === 2);
    assert.is(s.gates.length, 2, 'a refused stream creates no task');
    for (const a of aborts) a.abort();
    await until(() => s.slots.open('local') === 0);
    // Unsubscribed: the tasks run on and finish with no stream left to write to.
    for (const g of s.gates) g.reply('late');
    await until(() => s.tasks.list().tasks.every((t) => t.state === 'completed'));
    const ok = await open(s.url, rpc('SendStreamingMessage', sendParams('z', '1.0')), '1.0');
    assert.is(ok.status, 200);
    await ok.body?.cancel();
  } finally {
    await s.close();
  }
});

test('a client that stops reading is cut off, not buffered without end', async () => {
  const s = await serve({ maxBufferedBytes: 16 * 1024 });
  try {
    // A raw socket that sends the request and never reads what comes back.
    const sock = connect(s.port, '127.0.0.1');
    sock.pause();
    sock.on('error', () => {});
    const body = rpc('SendStreamingMessage', sendParams('big', '1.0'));
    sock.write(`POST /a2a HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\na2a-version: 1.0\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    await until(() => s.gates.length === 1 && s.slots.open() === 1);
    // A 32 MiB reply: far more than the socket buffers hold, so it backs up in the server's response buffer.
    s.gates[0].reply('x'.repeat(32 * 1024 * 1024));
    await until(() => s.tasks.list().tasks[0]?.state === 'completed');
    // The server drops the connection; its buffered bytes go with it.
    await until(() => s.sockets.length === 1 && s.sockets[0].destroyed, 5_000);
    assert.is(s.slots.open(), 0);
    sock.destroy();
  } finally {
    await s.close();
  }
});

test('an idle stream carries keep-alive comments', async () => {
  const s = await serve({ keepaliveMs: 20 });
  try {
    const r = await open(s.url, rpc('SendStreamingMessage', sendParams('wait', '1.0')), '1.0');
    const reader = (r.body as ReadableStream<Uint8Array>).getReader();
    let text = '';
    while (!text.includes(': keep-alive')) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    s.gates[0]?.reply('bye');
  } finally {
    await s.close();
  }
});

test.run();
