// claw.task.create / get / list / cancel (docs/a2a.md "claw.task.*"): the CKP view of the A2A task service,
// CKP error codes (not A2A's) for an unknown task, bad params, or no running agent.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { taskMethods } from '../../src/a2a/task-methods.ts';
import { TaskService } from '../../src/a2a/tasks.ts';
import { memoryTaskStore } from '../../src/a2a/task-store.ts';
import type { ChannelAgent } from '../../src/channels/types.ts';
import { captureLogger } from './helpers/fakes.ts';

let n = 0;
const newId = () => `id-${++n}`;
const agent: ChannelAgent = { channelTurns: true, turn: async (text) => ({ reply: `re: ${text}`, outcome: 'message', toolCalls: [], rejections: 0 }) };
const ctx = { transport: 'stdio' };

async function methods(withAgent = true) {
  const s = new TaskService({ store: memoryTaskStore(), getAgent: () => (withAgent ? agent : undefined), tools: false, newId, now: () => 5, log: captureLogger() });
  await s.open();
  return taskMethods(() => s, newId);
}
const call = async (m: Awaited<ReturnType<typeof methods>>, name: string, params: unknown) => m[name].handler(params, ctx, undefined as never) as Promise<any>;

test('create (text) → completed with the reply; get, list by context, cancel of a finished task refused', async () => {
  const m = await methods();
  const t = await call(m, 'claw.task.create', { text: 'ping', context_id: 'ops' });
  assert.is(t.state, 'completed');
  assert.is(t.context_id, 'ops');
  assert.equal(t.artifacts[0].parts, [{ type: 'text', text: 're: ping' }]);
  assert.is((await call(m, 'claw.task.get', { task_id: t.task_id })).task_id, t.task_id);
  const l = await call(m, 'claw.task.list', { context_id: 'ops' });
  assert.is(l.total, 1);
  await call(m, 'claw.task.cancel', { task_id: t.task_id }).then(
    () => assert.unreachable(),
    (e) => {
      assert.is(e.code, -32602);
      assert.is(e.data.reason, 'not_cancelable');
    },
  );
});

test('CKP codes: unknown task -32602 task_not_found-like reason, bad params -32602, no agent -32603', async () => {
  const m = await methods();
  await call(m, 'claw.task.get', { task_id: 'nope' }).then(
    () => assert.unreachable(),
    (e) => assert.equal([e.code, e.data.reason], [-32602, 'not_found']),
  );
  await call(m, 'claw.task.create', { text: 'a', parts: [{ type: 'text', text: 'b' }] }).then(
    () => assert.unreachable(),
    (e) => assert.is(e.code, -32602),
  );
  await call(m, 'claw.task.list', { state: 'TASK_STATE_DONE' }).then(
    () => assert.unreachable(),
    (e) => assert.is(e.code, -32602),
  );
  const idle = await methods(false);
  await call(idle, 'claw.task.create', { text: 'x' }).then(
    () => assert.unreachable(),
    (e) => assert.equal([e.code, e.data.reason], [-32603, 'unavailable']),
  );
});

test.run();
