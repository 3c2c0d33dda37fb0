// input_required (docs/a2a.md "Approvals"): a tool approval announced inside an A2A turn holds its task in
// input_required; the caller's next message on the task (a word or a data part) or the operator's decision lets it
// go on; `rejected` for a refusal before any answer.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { TaskService, approvalAnswer } from '../../src/a2a/tasks.ts';
import { memoryTaskStore } from '../../src/a2a/task-store.ts';
import { ErrorCode, ProtocolError } from '../../src/protocol/errors.ts';
import type { ChannelAgent } from '../../src/channels/types.ts';
import { captureLogger, deferred } from './helpers/fakes.ts';

let n = 0;
const newId = () => `id-${++n}`;
const msg = (parts: any[], taskId?: string) => ({ role: 'user' as const, messageId: newId(), parts, ...(taskId ? { taskId } : {}) });
const text = (t: string, taskId?: string) => msg([{ type: 'text', text: t }], taskId);

/** A turn whose tool needs approval: it announces the request (as the approval gate does) and waits. */
function supervised() {
  const decisions = new Map<string, ReturnType<typeof deferred<'approved' | 'denied'>>>();
  let svc!: TaskService;
  const agent: ChannelAgent = {
    channelTurns: true,
    async turn() {
      const id = `req-${++n}`;
      const d = deferred<'approved' | 'denied'>();
      decisions.set(id, d);
      await Promise.resolve();
      svc.onNotification({ method: 'claw.tool.approval_requested', params: { request_id: id, tool: 'slow' } });
      const outcome = await d.promise;
      return { reply: outcome === 'approved' ? 'RAN' : 'REFUSED', outcome: 'message', toolCalls: [], rejections: 0 };
    },
  };
  const decided: { id: string; decision: string; reason?: string }[] = [];
  svc = new TaskService({
    store: memoryTaskStore(),
    getAgent: () => agent,
    tools: true,
    newId,
    now: () => 1,
    log: captureLogger(),
    decide: async (id, decision, reason) => {
      decided.push({ id, decision, ...(reason ? { reason } : {}) });
      decisions.get(id)!.resolve(decision);
    },
    approvalSettled: (id) => decisions.get(id)?.promise,
  });
  return { svc, decisions, decided };
}

test('a blocking send returns input_required naming the tool; "approve" on the task runs it to completed', async () => {
  const { svc, decided } = supervised();
  await svc.open();
  const t = await svc.create(text('go'), { wait: true });
  assert.is(t.state, 'input_required');
  assert.match(t.statusMessage!, 'run the tool "slow"');
  const after = await svc.create(text(' Approve ', t.id), { wait: true });
  assert.is(after.id, t.id);
  assert.is(after.state, 'completed');
  assert.is(after.artifacts[0].parts[0].type === 'text' && after.artifacts[0].parts[0].text, 'RAN');
  assert.equal(decided.map((d) => d.decision), ['approved']);
  assert.is(after.history.length, 3, 'the request, the answer, the reply');
});

test('a data part {"approve": false} denies: the turn goes on with the refusal', async () => {
  const { svc, decided } = supervised();
  await svc.open();
  const t = await svc.create(text('go'), { wait: true });
  const after = await svc.create(msg([{ type: 'data', data: { approve: false, reason: 'not now' } }], t.id), { wait: true });
  assert.is(after.state, 'completed');
  assert.is((after.artifacts[0].parts[0] as any).text, 'REFUSED');
  assert.equal(decided, [{ id: decided[0].id, decision: 'denied', reason: 'not now' }]);
});

test("the operator's claw.tool.approve: the task goes back to working, then completed", async () => {
  const { svc, decisions } = supervised();
  await svc.open();
  const t = await svc.create(text('go'), { wait: true });
  assert.is(t.state, 'input_required');
  const [, d] = [...decisions].at(-1)!;
  d.resolve('approved'); // as claw.tool.approve from the operator
  await new Promise((r) => setTimeout(r, 5));
  assert.is(svc.get(t.id).state, 'completed');
});

test('anything else on an input_required task is refused, and a task not waiting takes no message', async () => {
  const { svc } = supervised();
  await svc.open();
  const t = await svc.create(text('go'), { wait: true });
  await svc.create(text('maybe later', t.id), { wait: true }).then(
    () => assert.unreachable(),
    (e) => assert.is(e.code, 'task.invalid_input'),
  );
  assert.is(svc.get(t.id).state, 'input_required');
  await svc.create(text('approve', t.id), { wait: true });
  await svc.create(text('approve', t.id), { wait: true }).then(
    () => assert.unreachable(),
    (e) => assert.is(e.code, 'task.unsupported'),
  );
});

test('answers: words and data parts', () => {
  assert.equal(approvalAnswer(text('yes')), { approve: true });
  assert.equal(approvalAnswer(text('Deny.')), { approve: false });
  assert.is(approvalAnswer(text('approve it please')), undefined);
  assert.equal(approvalAnswer(msg([{ type: 'data', data: { approve: true } }])), { approve: true });
  assert.is(approvalAnswer(msg([{ type: 'data', data: { approve: 'yes' } }])), undefined);
});

test('a policy refusal before any answer is rejected, not failed', async () => {
  const agent: ChannelAgent = {
    channelTurns: true,
    turn: async () => {
      throw new ProtocolError(ErrorCode.PolicyDenied, 'Policy denied: /etc/secret');
    },
  };
  const svc = new TaskService({ store: memoryTaskStore(), getAgent: () => agent, tools: true, newId, now: () => 1, log: captureLogger() });
  await svc.open();
  const t = await svc.create(text('go'), { wait: true });
  assert.is(t.state, 'rejected');
  assert.not.match(t.statusMessage!, '/etc/secret');
});

test.run();
