// The A2A HTTP+JSON binding on a real node:http server (docs/a2a.md "HTTP+JSON"): paths to operations, query
// parameters, the A2A error → HTTP status mapping with ErrorInfo, the shared body checks, and the versions served.
// The official SDK's REST transport drives it end to end in test/e2e/a2a-stream.test.ts.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type Server } from 'node:http';
import { a2aRestRoute } from '../../src/a2a/rest-route.ts';
import { TaskService } from '../../src/a2a/tasks.ts';
import { memoryTaskStore } from '../../src/a2a/task-store.ts';
import type { ChannelAgent } from '../../src/channels/types.ts';
import { captureLogger, deferred } from './helpers/fakes.ts';
import { openA2aAccess } from './helpers/a2a-open-access.ts';

const ACCESS = openA2aAccess();

let n = 0;

async function serve() {
  const hold = deferred<string>();
  const agent: ChannelAgent = {
    channelTurns: true,
    turn: async (text) => ({ reply: text === 'hold' ? await hold.promise : `echo ${text}`, outcome: 'message', toolCalls: [], rejections: 0 }),
  };
  const tasks = new TaskService({ store: memoryTaskStore(), getAgent: () => agent, tools: false, newId: () => `id-${++n}`, now: () => 1_000 + n, log: captureLogger(), access: () => ACCESS });
  await tasks.open();
  const route = a2aRestRoute({ tasks: () => tasks, prefix: '/a2a', maxBodyBytes: 4096, requestTimeoutMs: 5_000 });
  const server: Server = createServer((req, res) => route.handle(req, res, { client: '127.0.0.1', loopback: true }));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  const base = `http://127.0.0.1:${port}/a2a`;
  const call = async (method: string, path: string, body?: string, headers: Record<string, string> = {}) => {
    const r = await fetch(`${base}${path}`, { method, body, headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), 'a2a-version': '1.0', ...headers } });
    return { status: r.status, headers: r.headers, json: (await r.json()) as any };
  };
  return { call, hold, close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))) };
}

const send = (text: string, extra: Record<string, unknown> = {}) => JSON.stringify({ message: { messageId: `m-${++n}`, role: 'ROLE_USER', parts: [{ text }], contextId: 'ctx-rest' }, ...extra });
const errorInfo = (j: any) => j.error.details.find((d: any) => d['@type'] === 'type.googleapis.com/google.rpc.ErrorInfo');

test('send, get, list with query parameters, cancel: 1.0 JSON bodies', async () => {
  const s = await serve();
  try {
    const sent = await s.call('POST', '/message:send', send('hi'));
    assert.is(sent.status, 200);
    assert.is(sent.json.task.status.state, 'TASK_STATE_COMPLETED');
    assert.equal(sent.json.task.artifacts[0].parts, [{ text: 'echo hi' }]);
    const id = sent.json.task.id;
    const got = await s.call('GET', `/tasks/${encodeURIComponent(id)}?historyLength=1`);
    assert.is(got.json.id, id);
    assert.is(got.json.history.length, 1);
    const working = await s.call('POST', '/message:send', send('hold', { configuration: { returnImmediately: true } }));
    assert.is(working.json.task.status.state, 'TASK_STATE_WORKING');
    const listed = await s.call('GET', '/tasks?contextId=ctx-rest&status=TASK_STATE_WORKING&pageSize=5&includeArtifacts=true');
    assert.equal(listed.json.tasks.map((t: any) => t.id), [working.json.task.id]);
    assert.is(listed.json.totalSize, 1);
    // A cancel with no body and no Content-Type (curl -X POST) is fine.
    const canceled = await s.call('POST', `/tasks/${working.json.task.id}:cancel`);
    assert.is(canceled.json.status.state, 'TASK_STATE_CANCELED');
    s.hold.resolve('late');
  } finally {
    await s.close();
  }
});

test('A2A errors → HTTP status (§5.4) with a google.rpc.ErrorInfo naming the error (§11.6)', async () => {
  const s = await serve();
  try {
    const missing = await s.call('GET', '/tasks/nope');
    assert.is(missing.status, 404);
    assert.equal([missing.json.error.code, missing.json.error.status], [404, 'NOT_FOUND']);
    assert.equal(errorInfo(missing.json), { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'TASK_NOT_FOUND', domain: 'a2a-protocol.org' });
    const done = (await s.call('POST', '/message:send', send('x'))).json.task.id;
    const notCancelable = await s.call('POST', `/tasks/${done}:cancel`, '{}');
    assert.is(notCancelable.status, 409);
    assert.is(errorInfo(notCancelable.json).reason, 'TASK_NOT_CANCELABLE');
    const terminal = await s.call('POST', `/tasks/${done}:subscribe`);
    assert.equal([terminal.status, errorInfo(terminal.json).reason], [400, 'UNSUPPORTED_OPERATION']);
    const push = await s.call('GET', `/tasks/${done}/pushNotificationConfigs`);
    assert.equal([push.status, errorInfo(push.json).reason], [400, 'PUSH_NOTIFICATION_NOT_SUPPORTED']);
    const bad = await s.call('POST', '/message:send', JSON.stringify({ message: { role: 'ROLE_USER', parts: [] } }));
    assert.equal([bad.status, errorInfo(bad.json).reason], [400, 'INVALID_PARAMS']);
    const surrogate = await s.call('POST', '/message:send', String.raw`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"\udfff"}]}}`);
    assert.equal([surrogate.status, errorInfo(surrogate.json).reason], [400, 'INVALID_PARAMS']);
    const type = await s.call('POST', '/message:send', send('x'), { 'content-type': 'text/plain' });
    assert.equal([type.status, errorInfo(type.json).reason], [415, 'CONTENT_TYPE_NOT_SUPPORTED']);
    const big = await s.call('POST', '/message:send', send('x'.repeat(10_000)));
    assert.is(big.status, 413);
    const method = await s.call('DELETE', '/tasks');
    assert.equal([method.status, method.headers.get('allow')], [405, 'GET']);
    assert.is((await s.call('GET', '/elsewhere')).status, 404);
  } finally {
    await s.close();
  }
});

test('versions: 1.0 (or no header) is served; 0.3 and the 0.3 /v1/ paths are VersionNotSupported', async () => {
  const s = await serve();
  try {
    assert.is((await s.call('POST', '/message:send', send('hi'), { 'a2a-version': '' })).status, 200);
    const old = await s.call('POST', '/message:send', send('hi'), { 'a2a-version': '0.3' });
    assert.equal([old.status, errorInfo(old.json).reason], [400, 'VERSION_NOT_SUPPORTED']);
    const v1 = await s.call('POST', '/v1/message:send', send('hi'));
    assert.equal([v1.status, errorInfo(v1.json).reason], [400, 'VERSION_NOT_SUPPORTED']);
  } finally {
    await s.close();
  }
});

test.run();
