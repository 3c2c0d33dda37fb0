// The A2A task service (docs/a2a.md "Tasks"): a turn per message in its context's conversation, the reply as
// an artifact, cancel, list, the restart rule, and the A2A JSON-RPC dialects over it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { TaskService, RESTART_MESSAGE } from '../../src/a2a/tasks.ts';
import { memoryTaskStore } from '../../src/a2a/task-store.ts';
import { parseMessage, wireTask } from '../../src/a2a/wire.ts';
import { versionOf } from '../../src/a2a/rpc-route.ts';
import type { ChannelAgent, ChannelTurnOptions } from '../../src/channels/types.ts';
import type { A2aTask } from '../../src/a2a/types.ts';
import { captureLogger, deferred } from './helpers/fakes.ts';

let n = 0;
const newId = () => `id-${++n}`;

function fakeAgent(answer: (text: string, o?: ChannelTurnOptions) => Promise<string> | string) {
  const calls: { text: string; opts?: ChannelTurnOptions; signal: AbortSignal }[] = [];
  const agent: ChannelAgent = {
    channelTurns: true,
    async turn(text, signal, opts) {
      calls.push({ text, opts, signal });
      return { reply: await answer(text, opts), outcome: 'message', toolCalls: [], rejections: 0 };
    },
  };
  return { agent, calls };
}

const msg = (text: string, contextId?: string) => ({ role: 'user' as const, messageId: newId(), parts: [{ type: 'text' as const, text }], ...(contextId ? { contextId } : {}) });

function service(agent: ChannelAgent | undefined, store = memoryTaskStore()) {
  return new TaskService({ store, getAgent: () => agent, tools: false, newId, now: () => 1_000, log: captureLogger() });
}

test('a blocking create runs one turn in the context conversation, tools off, reply as artifact', async () => {
  const { agent, calls } = fakeAgent((t) => `echo ${t}`);
  const s = service(agent);
  await s.open();
  const t = await s.create(msg('hello', 'ctx-1'), { wait: true });
  assert.is(t.state, 'completed');
  assert.is(t.contextId, 'ctx-1');
  assert.equal(t.artifacts[0].parts, [{ type: 'text', text: 'echo hello' }]);
  assert.equal(calls[0].opts, { channel: 'a2a', user: 'a2a', conversation: 'a2a:ctx-1', tools: false });
  assert.is(t.history.length, 2);
});

test('non-blocking create answers working; cancel aborts the turn; a finished task cannot be canceled', async () => {
  const gate = deferred<string>();
  const { agent, calls } = fakeAgent(() => gate.promise);
  const s = service(agent);
  await s.open();
  const t = await s.create(msg('slow'), { wait: false });
  assert.is(t.state, 'working');
  s.cancel(t.id);
  assert.is(s.get(t.id).state, 'canceled');
  assert.ok(calls[0].signal.aborted);
  gate.resolve('late');
  await new Promise((r) => setTimeout(r, 5));
  assert.is(s.get(t.id).state, 'canceled', 'a late reply does not revive a canceled task');
  assert.throws(() => s.cancel(t.id), (e: any) => e.code === 'task.not_cancelable');
  assert.throws(() => s.get('nope'), (e: any) => e.code === 'task.not_found');
});

test('a task left working by a dead process is failed at the next open', async () => {
  const store = memoryTaskStore();
  const left: A2aTask = { id: 't-1', contextId: 'c', state: 'working', history: [], artifacts: [], createdAt: 1, updatedAt: 1 };
  const done: A2aTask = { ...left, id: 't-2', state: 'completed' };
  await store.save([left, done]);
  const s = service(undefined, store);
  await s.open();
  assert.is(s.get('t-1').state, 'failed');
  assert.is(s.get('t-1').statusMessage, RESTART_MESSAGE);
  assert.is(s.get('t-2').state, 'completed');
  assert.is((await store.load()).find((t) => t.id === 't-1')!.state, 'failed', 'the verdict is stored');
});

test('no agent running → unavailable; a message naming a task cannot continue it', async () => {
  const s = service(undefined);
  await s.open();
  await s.create(msg('x'), { wait: true }).then(
    () => assert.unreachable(),
    (e) => assert.is(e.code, 'task.unavailable'),
  );
  const { agent } = fakeAgent(() => 'ok');
  const s2 = service(agent);
  await s2.open();
  const t = await s2.create(msg('x'), { wait: true });
  await s2.create({ ...msg('y'), taskId: t.id }, { wait: true }).then(
    () => assert.unreachable(),
    (e) => assert.is(e.code, 'task.unsupported'),
  );
});

test('list: by context and state, newest first, paged', async () => {
  let clock = 0;
  const { agent } = fakeAgent(() => 'ok');
  const s = new TaskService({ store: memoryTaskStore(), getAgent: () => agent, tools: false, newId, now: () => ++clock, log: captureLogger() });
  await s.open();
  const a = await s.create(msg('1', 'A'), { wait: true });
  const b = await s.create(msg('2', 'A'), { wait: true });
  await s.create(msg('3', 'B'), { wait: true });
  const page = s.list({ contextId: 'A', pageSize: 1 });
  assert.equal(page.tasks.map((t) => t.id), [b.id]);
  assert.is(page.totalSize, 2);
  assert.equal(s.list({ contextId: 'A', pageToken: page.nextPageToken }).tasks.map((t) => t.id), [a.id]);
  assert.is(s.list({ state: 'failed' }).totalSize, 0);
});

test('wire: 1.0 and 0.3 shapes of one task; both message dialects parse', () => {
  const t: A2aTask = { id: 't', contextId: 'c', state: 'input_required', history: [], artifacts: [{ artifactId: 'a', parts: [{ type: 'text', text: 'hi' }] }], createdAt: 0, updatedAt: 0 };
  const v1 = wireTask(t, '1.0') as any;
  assert.is(v1.status.state, 'TASK_STATE_INPUT_REQUIRED');
  assert.equal(v1.artifacts[0].parts, [{ text: 'hi' }]);
  const v03 = wireTask(t, '0.3') as any;
  assert.is(v03.kind, 'task');
  assert.is(v03.status.state, 'input-required');
  assert.equal(v03.artifacts[0].parts, [{ kind: 'text', text: 'hi' }]);
  assert.equal((parseMessage({ messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'a' }, { data: { x: 1 } }] }) as any).parts, [{ type: 'text', text: 'a' }, { type: 'data', data: { x: 1 } }]);
  assert.equal((parseMessage({ kind: 'message', messageId: 'm', role: 'user', parts: [{ kind: 'file', file: { uri: 'https://x/y.png', mimeType: 'image/png' } }] }) as any).parts, [{ type: 'url', url: 'https://x/y.png', mediaType: 'image/png' }]);
  assert.type(parseMessage({ messageId: 'm', role: 'ROLE_USER', contextId: 'c'.repeat(201), parts: [{ text: 'a' }] }), 'string', 'a huge contextId is refused');
  assert.type(parseMessage({ messageId: 'm', role: 'ROLE_AGENT', parts: [{ text: 'a' }] }), 'string', 'an agent-role message is refused');
});

test('A2A-Version: absent or empty is 0.3, 1.0 is 1.0, anything else is VersionNotSupported', () => {
  assert.is(versionOf(undefined), '0.3');
  assert.is(versionOf(''), '0.3');
  assert.is(versionOf('1.0'), '1.0');
  assert.throws(() => versionOf('2.0'), (e: any) => e.code === -32009);
});

test('a task whose store write failed (a full disk) is written with the next change, or warned about at close', async () => {
  const inner = memoryTaskStore();
  let full = false;
  const store = { ...inner, put: async (t: A2aTask) => (full ? Promise.reject(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })) : inner.put(t)) };
  const { agent } = fakeAgent((t) => `echo ${t}`);
  const log = captureLogger();
  const s = new TaskService({ store, getAgent: () => agent, tools: false, newId, now: () => 1_000, log });
  await s.open();
  full = true;
  const a = await s.create(msg('while full'), { wait: true });
  assert.is(a.state, 'completed');
  assert.equal((await inner.load()).map((t) => t.id), [], 'nothing stored while the disk is full');
  full = false;
  const b = await s.create(msg('after'), { wait: true });
  const stored = new Map((await inner.load()).map((t) => [t.id, t.state]));
  assert.is(stored.get(a.id), 'completed', 'the finished task was written with the next change');
  assert.is(stored.get(b.id), 'completed');

  // Still full at close: told, with the ids.
  full = true;
  const c = await s.create(msg('lost'), { wait: true });
  await s.close();
  const w = log.entries.find((e) => e.msg === 'a2a tasks not stored (lost at this restart)');
  assert.ok(w, 'warned at close');
  assert.equal((w!.fields as any).ids, [c.id]);
});

test.run();
