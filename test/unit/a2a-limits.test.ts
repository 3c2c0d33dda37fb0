// What one A2A caller can cost the agent (docs/a2a.md "Security", "Limits"): the message cap counts every part,
// refused tasks keep an excerpt, retention keeps each caller within its quota so that one caller's volume drops
// its own tasks and never another's, streams are capped per caller as well as per address, a credential with no
// principal is refused instead of becoming `local`, and a2a.path cannot shadow another route. Tried from the
// attacker's side.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, request, type Server } from 'node:http';
import { TaskService } from '../../src/a2a/tasks.ts';
import { memoryTaskStore } from '../../src/a2a/task-store.ts';
import { createA2aAccess } from '../../src/a2a/access.ts';
import { TooManyRequests } from '../../src/a2a/errors.ts';
import { StreamSlots, type StreamLimits } from '../../src/a2a/stream.ts';
import { a2aModule } from '../../src/a2a/module.ts';
import { ClawError } from '../../src/protocol/errors.ts';
import { a2aRpcRoute } from '../../src/a2a/rpc-route.ts';
import { a2aRestRoute } from '../../src/a2a/rest-route.ts';
import { approvePairing } from '../../src/channels/pairing.ts';
import { memoryPairingStorage } from '../../src/channels/pairing-store.ts';
import { createChannelGate } from '../../src/channels/access.ts';
import { loadRuntimeConfig } from '../../src/config/load-config.ts';
import type { ChannelAgent, ChannelSpec } from '../../src/channels/types.ts';
import type { TaskPart } from '../../src/a2a/types.ts';
import { parseMessage } from '../../src/a2a/wire.ts';
import type { RouteContext } from '../../src/transports/http/server.ts';
import { captureLogger, deferred } from './helpers/fakes.ts';
import { openA2aAccess } from './helpers/a2a-open-access.ts';

let n = 0;
const newId = () => `id-${++n}`;
const msg = (parts: TaskPart[], o: { taskId?: string } = {}) => ({ role: 'user' as const, messageId: newId(), parts, ...o });
const text = (t: string) => msg([{ type: 'text', text: t }]);

function setup(o: { spec?: Partial<ChannelSpec>; maxTasks?: number; perCaller?: number; maxMessageBytes?: number } = {}) {
  const holds: ((r: string) => void)[] = [];
  const calls: string[] = [];
  const agent: ChannelAgent = {
    channelTurns: true,
    async turn(t) {
      calls.push(t);
      if (t.startsWith('hold')) {
        const d = deferred<string>();
        holds.push(d.resolve);
        return { reply: await d.promise, outcome: 'message', toolCalls: [], rejections: 0 };
      }
      return { reply: 'ok', outcome: 'message', toolCalls: [], rejections: 0 };
    },
  };
  const pairing = memoryPairingStorage();
  const access = o.spec
    ? createA2aAccess({ channel: 'agents', gate: createChannelGate('agents', { type: 'webhook', ...o.spec } as ChannelSpec, { now: () => 1_000_000, monotonic: () => 0, pairing, randomInt: () => 3 }), policies: [], log: captureLogger() })
    : openA2aAccess();
  let clock = 1_000;
  const svc = new TaskService({ store: memoryTaskStore(), getAgent: () => agent, tools: false, newId, now: () => ++clock, log: captureLogger(), access: () => access,
    maxTasks: o.maxTasks, maxTasksPerCaller: o.perCaller, maxMessageBytes: o.maxMessageBytes });
  return { svc, calls, holds, pairing };
}

test('the message cap counts every part: text bytes, decoded raw bytes, data JSON, url; refused as invalid input', async () => {
  const { svc, calls } = setup({ maxMessageBytes: 1000 });
  await svc.open();
  const over = async (parts: TaskPart[]) => svc.create(msg(parts), { wait: true, caller: 'A' }).then(
    () => assert.unreachable('a message over the cap was taken'),
    (e: { code?: string; message: string }) => (assert.is(e.code, 'task.invalid_input'), assert.match(e.message, /message too large: \d+ bytes, all parts counted \(a2a\.max_message_bytes: 1000\)/)),
  );
  // 1,200 bytes of base64 decode to 900: under; 1,400 → 1,050: over. A raw part is not seen by the gate's length check.
  assert.is((await svc.create(msg([{ type: 'raw', raw: 'A'.repeat(1200) }]), { wait: true, caller: 'A' })).state, 'completed');
  await over([{ type: 'raw', raw: 'A'.repeat(1400) }]);
  await over([{ type: 'text', text: 'é'.repeat(501) }]);
  await over([{ type: 'data', data: { pad: 'x'.repeat(995) } }]);
  await over([{ type: 'url', url: `https://x.example/${'a'.repeat(990)}` }]);
  await over([{ type: 'text', text: 'x'.repeat(600) }, { type: 'raw', raw: 'A'.repeat(600) }]);
  assert.is(calls.length, 1);
  assert.is(svc.list().tasks.length, 1, 'a refused message creates no task');
});

test('what a caller chooses is bounded too: message and task ids, media types and the number of parts; ids count toward the cap', async () => {
  const base = { role: 'ROLE_USER', messageId: 'm', parts: [{ text: 'hi' }] };
  assert.match(String(parseMessage({ ...base, messageId: 'x'.repeat(201) })), /messageId must be at most 200/);
  assert.match(String(parseMessage({ ...base, taskId: 'x'.repeat(201) })), /taskId must be a string of at most 200/);
  assert.match(String(parseMessage({ ...base, parts: Array.from({ length: 65 }, () => ({ text: '' })) })), /at most 64 parts/);
  assert.match(String(parseMessage({ ...base, parts: [{ text: 'a', mediaType: 'x'.repeat(256) }] })), /media type must be at most 255/);
  assert.match(String(parseMessage({ ...base, role: 'user', parts: [{ kind: 'file', file: { uri: 'https://x', mimeType: 'x'.repeat(256) } }] })), /media type/);
  assert.is(typeof parseMessage({ ...base, parts: Array.from({ length: 64 }, () => ({ text: 'a', mediaType: 'text/plain' })) }), 'object');
  const { svc } = setup({ maxMessageBytes: 1000 });
  await svc.open();
  const long = { role: 'user' as const, messageId: 'i'.repeat(990), parts: [{ type: 'text' as const, text: 'x'.repeat(20), mediaType: 'text/plain' }] };
  await svc.create(long, { wait: true, caller: 'A' }).then(() => assert.unreachable('ids were not counted'), (e: Error) => assert.match(e.message, /message too large: 1020 bytes/));
});

test('a rejected task keeps an excerpt of a large message, not the message', async () => {
  const { svc } = setup({ spec: { access_control: { mode: 'allowlist', allowed_ids: ['A'] } } });
  await svc.open();
  const t = await svc.create(msg([{ type: 'text', text: 'x'.repeat(40_000) }, { type: 'raw', raw: 'A'.repeat(20_000) }]), { wait: true, caller: 'STRANGER' });
  assert.is(t.state, 'rejected');
  assert.is(t.history.length, 1);
  assert.equal(t.history[0].parts.map((p) => p.type), ['text']);
  const kept = (t.history[0].parts[0] as { text: string }).text;
  assert.ok(kept.length <= 1025 && kept.endsWith('…'), `kept ${kept.length} characters`);
  // A small refused message keeps its text, as a new message: never the parts as sent.
  const small = await svc.create(msg([{ type: 'text', text: 'hello', mediaType: 'text/x-'.padEnd(200, 'y') }, { type: 'raw', raw: 'QUJD' }]), { wait: true, caller: 'STRANGER' });
  assert.is(small.history[0].parts.length, 1);
  assert.match((small.history[0].parts[0] as { text: string }).text, /^hello/);
  assert.not.ok(JSON.stringify(small.history).includes('text/x-'), 'no field of the parts is kept');
});

test('auth_required keeps an excerpt: after pairing, a cut message is refused (send it again), a whole one runs', async () => {
  const { svc, calls, pairing } = setup({ spec: { access_control: { mode: 'pairing', pairing: { code_expiry_minutes: 10, max_pending: 5 } } } });
  await svc.open();
  const big = await svc.create(text(`hold ${'y'.repeat(30_000)}`), { wait: true, caller: 'NEW' });
  assert.is(big.state, 'auth_required');
  assert.ok(JSON.stringify(big.history).length < 2_000);
  const small = await svc.create(text('hello'), { wait: true, caller: 'NEW' });
  assert.ok(approvePairing(pairing, /code (\S+) /.exec(big.statusMessage!)![1], 1_000_000).ok);
  const retried = await svc.create({ ...text('go'), taskId: big.id }, { wait: true, caller: 'NEW' });
  assert.is(retried.state, 'rejected');
  assert.match(retried.statusMessage!, /too large to keep until pairing: send it again/);
  assert.is((await svc.create({ ...text('go'), taskId: small.id }, { wait: true, caller: 'NEW' })).state, 'completed');
  assert.not.ok(calls.some((c) => c.startsWith('hold')), 'the excerpt never ran as the message');
});

test('retention: one caller\'s volume drops its own oldest finished tasks, never another caller\'s', async () => {
  const { svc } = setup({ maxTasks: 10, perCaller: 4 });
  await svc.open();
  const bTasks = [];
  for (let i = 0; i < 3; i++) bTasks.push((await svc.create(text('b'), { wait: true, caller: 'B' })).id);
  const aTasks = [];
  for (let i = 0; i < 50; i++) aTasks.push((await svc.create(text('a'), { wait: true, caller: 'A' })).id);
  assert.equal(svc.list({}, 'B').tasks.map((t) => t.id).sort(), [...bTasks].sort(), 'B keeps every task');
  assert.equal(svc.list({}, 'A').tasks.map((t) => t.id).sort(), aTasks.slice(-4).sort(), 'A keeps its newest 4');
});

test('retention over max_tasks takes the creating caller\'s own finished tasks first', async () => {
  // Quotas add up past max_tasks (4 callers × 3 > 8): the caller that pushes the total over pays first.
  const { svc } = setup({ maxTasks: 8, perCaller: 3 });
  await svc.open();
  const ids: Record<string, string[]> = {};
  for (const c of ['B', 'C', 'A']) for (let i = 0; i < 3; i++) (ids[c] ??= []).push((await svc.create(text(c), { wait: true, caller: c })).id);
  assert.is(svc.list({}, 'A').tasks.length, 2, 'A\'s third task took one of A\'s own');
  assert.is(svc.list({}, 'B').tasks.length, 3);
  assert.is(svc.list({}, 'C').tasks.length, 3);
});

test('a caller whose quota is full of tasks in progress is refused (429), others are not', async () => {
  const { svc, holds } = setup({ maxTasks: 100, perCaller: 2 });
  await svc.open();
  await svc.create(text('hold 1'), { wait: false, caller: 'A' });
  await svc.create(text('hold 2'), { wait: false, caller: 'A' });
  const refused = await svc.create(text('hold 3'), { wait: false, caller: 'A' }).catch((e) => e);
  assert.ok(refused instanceof TooManyRequests, String(refused));
  assert.match(refused.message, /too many tasks in progress for this caller \(a2a\.max_tasks_per_caller: 2\)/);
  assert.is((await svc.create(text('b'), { wait: true, caller: 'B' })).state, 'completed');
  for (const h of holds) h('done');
  await new Promise((r) => setTimeout(r, 10));
  assert.is((await svc.create(text('a'), { wait: true, caller: 'A' })).state, 'completed', 'finished tasks make room again');
});

test('streams: capped per caller on any number of addresses; callers behind one address each get their own cap', async () => {
  const s = await serveRoutes({ perCaller: 2, total: 8, keepaliveMs: 15_000, maxBufferedBytes: 1024 });
  try {
    const open = (client: string, principal: string) => (s.setCtx({ client, loopback: false, principal, authenticated: true }), s.stream());
    assert.equal([await open('10.0.0.1', 'A'), await open('10.0.0.2', 'A'), await open('10.0.0.3', 'A')], [200, 200, 429]);
    // Behind one NAT: B and C both open their two, past what one caller may hold.
    assert.equal([await open('192.0.2.9', 'B'), await open('192.0.2.9', 'B'), await open('192.0.2.9', 'C'), await open('192.0.2.9', 'C')], [200, 200, 200, 200]);
    assert.equal([s.slots.open('A'), s.slots.open('B'), s.slots.open()], [2, 2, 6]);
  } finally {
    await s.close();
  }
});

test('a2a.path cannot shadow the CKP endpoint, /, /healthz or /.well-known/: refused naming both', async () => {
  const enc = new TextEncoder();
  const load = (y: string) => loadRuntimeConfig({ read: async () => enc.encode(y), exists: () => true } as never, { explicit: '/cfg/claw.runtime.yaml' });
  for (const p of ['/', '/a2a/../ckp', '/a//b', '/./a2a', '/a2a/..']) assert.equal((await load(`a2a: { enabled: true, path: "${p}" }\n`)).issues.map((i) => i.path), ['a2a.path'], p);
  assert.equal((await load('a2a: { enabled: true, path: /agents/a2a }\n')).issues, []);
  // A trailing slash would put both bindings on one route key (JSON-RPC at `path`, HTTP+JSON below it).
  assert.equal((await load('a2a: { enabled: true, path: /agents/a2a/ }\n')).issues.map((i) => i.path), ['a2a.path']);
  const build = (path: string, url = 'http://127.0.0.1:8080/ckp') => () =>
    a2aModule({ config: { a2a: { enabled: true, path } }, log: captureLogger(), listeners: [{ url, addRoute() {}, security: { bearer: false, clientCert: false }, limits: { maxBodyBytes: 1, requestTimeoutMs: 1, maxConnections: 8 } } as never],
      getAgent: () => undefined, openStore: async () => memoryTaskStore(), newId, now: () => 0, runtimeVersion: '0', openGate: () => { throw new Error('unused'); } });
  const refused = (path: string, why: RegExp, url?: string) => assert.throws(build(path, url), (e: unknown) => e instanceof ClawError && e.code === 'usage' && why.test(e.message), path);
  refused('/ckp', /a2a\.path "\/ckp" collides with the CKP endpoint of http:\/\/127\.0\.0\.1:8080\/ckp \(\/ckp\)/);
  refused('/ckp/a2a', /the CKP endpoint/);
  refused('/api', /the CKP endpoint/, 'http://127.0.0.1:8080/api/ckp');
  refused('/healthz', /the health probe \(\/healthz\)/);
  refused('/.well-known/a2a', /the agent card \(\/\.well-known\)/);
  build('/a2a')();
  build('/ckp2')();
});

async function serveRoutes(limits?: StreamLimits) {
  const hold = deferred<string>();
  const tasks = new TaskService({ store: memoryTaskStore(), getAgent: () => ({ channelTurns: true, turn: async (t) => ({ reply: t === 'hold' ? await hold.promise : 'ok', outcome: 'message', toolCalls: [], rejections: 0 }) }), tools: false, newId, now: () => 1_000, log: captureLogger(), access: () => openA2aAccess(), maxConcurrent: 100 });
  await tasks.open();
  const slots = new StreamSlots(limits);
  const deps = { tasks: () => tasks, slots, maxBodyBytes: 65536, requestTimeoutMs: 5_000 };
  const rpc = a2aRpcRoute(deps);
  const rest = a2aRestRoute({ ...deps, prefix: '/a2a' });
  let ctx: RouteContext = { client: '127.0.0.1', loopback: true };
  const server: Server = createServer((req, res) => (req.url === '/a2a' ? rpc : rest).handle(req, res, ctx));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  // node:http sends the path as written: no client-side resolution of `..`.
  const raw = (method: string, path: string, body?: string) =>
    new Promise<{ status: number; json: any }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method, path, headers: { 'content-type': 'application/json', 'a2a-version': '1.0' } }, (res) => {
        let t = '';
        res.on('data', (c) => (t += c));
        res.on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(t) }));
      });
      req.on('error', reject);
      req.end(body);
    });
  // A stream that stays open (its task holds): the status once the headers are in.
  const stream = () =>
    new Promise<number>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/a2a/message:stream', headers: { 'content-type': 'application/json', 'a2a-version': '1.0' } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('error', reject);
      req.end(JSON.stringify({ message: { messageId: newId(), role: 'ROLE_USER', parts: [{ text: 'hold' }] } }));
    });
  return { raw, stream, tasks, slots, setCtx: (c: RouteContext) => (ctx = c), close: () => (hold.resolve('done'), new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r())))) };
}

test('authenticated without a principal: 401 on both bindings, never the `local` caller', async () => {
  const s = await serveRoutes();
  try {
    await s.tasks.create(text('mine'), { wait: true, caller: 'local' });
    s.setCtx({ client: '203.0.113.5', loopback: false, authenticated: true });
    const rpc = await s.raw('POST', '/a2a', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} }));
    assert.is(rpc.status, 401);
    assert.match(rpc.json.error.message, /names no caller/);
    const rest = await s.raw('GET', '/a2a/tasks');
    assert.equal([rest.status, rest.json.error.status], [401, 'UNAUTHENTICATED']);
    // Unauthenticated (a loopback listener without credentials): the local caller, as before.
    s.setCtx({ client: '127.0.0.1', loopback: true });
    assert.is((await s.raw('GET', '/a2a/tasks')).json.tasks.length, 1);
  } finally {
    await s.close();
  }
});

test('a body nesting deeper than 128 levels is refused before it is parsed, on both bindings, in a bounded time', async () => {
  const s = await serveRoutes();
  try {
    const deep = `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":${'['.repeat(30_000)}${']'.repeat(30_000)}}`;
    const t0 = Date.now();
    const rpc = await s.raw('POST', '/a2a', deep);
    const rest = await s.raw('POST', '/a2a/message:send', `{"message":${'['.repeat(30_000)}${']'.repeat(30_000)}}`);
    assert.equal([rpc.status, rest.status], [400, 400]);
    assert.match(rpc.json.error.message, /nests deeper than 128 levels/);
    assert.ok(Date.now() - t0 < 2_000);
    // Brackets inside strings are text, not nesting.
    const ok = await s.raw('POST', '/a2a', JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'SendMessage', params: { message: { messageId: 'b', role: 'ROLE_USER', parts: [{ text: '['.repeat(5_000) }] } } }));
    assert.is(ok.status, 200);
  } finally {
    await s.close();
  }
});

test('HTTP+JSON: a path that leaves the A2A prefix once `..` or `%2e%2e` are resolved is 404, not an operation', async () => {
  const s = await serveRoutes();
  try {
    for (const p of ['/a2a/../a2b/tasks', '/a2a/%2e%2e/a2b/tasks', '/a2a/%2E%2E/x/message:send', '/a2a/./../ckp']) {
      const r = await s.raw('GET', p);
      assert.is(r.status, 404, p);
      assert.is(r.json.error.status, 'NOT_FOUND');
    }
    assert.is((await s.raw('GET', '/a2a/tasks')).status, 200);
    // `..` that stays below the prefix is the path it resolves to.
    assert.is((await s.raw('GET', '/a2a/x/../tasks')).status, 200);
  } finally {
    await s.close();
  }
});

test.run();
