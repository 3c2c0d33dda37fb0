// claw.task.subscribe (docs/a2a.md "claw.task.*"): a long poll, since a CKP request gets one answer. It answers
// when the task changes (or already differs from `since`), at once for a task whose state ends a stream, and
// with the task as it is after wait_ms.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { taskMethods } from '../../src/a2a/task-methods.ts';
import { TaskService } from '../../src/a2a/tasks.ts';
import { memoryTaskStore } from '../../src/a2a/task-store.ts';
import type { ChannelAgent } from '../../src/channels/types.ts';
import { captureLogger, deferred, tick } from './helpers/fakes.ts';

let n = 0;
const newId = () => `id-${++n}`;
const ctx = { transport: 'stdio' };

async function setup() {
  const gate = deferred<string>();
  const agent: ChannelAgent = { channelTurns: true, turn: async () => ({ reply: await gate.promise, outcome: 'message', toolCalls: [], rejections: 0 }) };
  let now = 1_000;
  const s = new TaskService({ store: memoryTaskStore(), getAgent: () => agent, tools: false, newId, now: () => now++, log: captureLogger() });
  await s.open();
  const m = taskMethods(() => s, newId);
  const call = (name: string, params: unknown) => m[name].handler(params, ctx, undefined as never) as Promise<any>;
  return { call, gate };
}

test('waits for the next change; answers at once when the caller is behind or the task is finished', async () => {
  const { call, gate } = await setup();
  const t = await call('claw.task.create', { text: 'slow', wait: false });
  assert.is(t.state, 'working');
  let answered: any;
  const pending = call('claw.task.subscribe', { task_id: t.task_id, since: t.updated_at }).then((r) => (answered = r));
  await tick(20);
  assert.is(answered, undefined, 'nothing changed yet: still waiting');
  gate.resolve('ok');
  await pending;
  // The first change after `since` (the status moves after the artifact; the caller polls again for more).
  assert.ok(answered.updated_at !== t.updated_at || answered.artifacts.length === 1, JSON.stringify(answered));
  const done = await call('claw.task.get', { task_id: t.task_id });
  assert.is(done.state, 'completed');
  // Behind (an older `since`) or finished: at once.
  assert.is((await call('claw.task.subscribe', { task_id: t.task_id, since: t.updated_at })).state, 'completed');
  assert.is((await call('claw.task.subscribe', { task_id: t.task_id })).state, 'completed');
});

test('after wait_ms with no change: the task as it is; unknown task and bad params are CKP errors', async () => {
  const { call } = await setup();
  const t = await call('claw.task.create', { text: 'slow', wait: false });
  const started = Date.now();
  const same = await call('claw.task.subscribe', { task_id: t.task_id, since: t.updated_at, wait_ms: 30 });
  assert.ok(Date.now() - started >= 25);
  assert.is(same.updated_at, t.updated_at);
  await call('claw.task.subscribe', { task_id: 'nope' }).then(
    () => assert.unreachable(),
    (e) => assert.equal([e.code, e.data.reason], [-32602, 'not_found']),
  );
  await call('claw.task.subscribe', { task_id: t.task_id, wait_ms: 60_000 }).then(
    () => assert.unreachable(),
    (e) => assert.is(e.code, -32602),
  );
});

test.run();
