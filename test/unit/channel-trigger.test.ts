import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { TriggerScheduler } from '../../src/channels/trigger.ts';
import { createChannelRunner } from '../../src/channels/runner.ts';
import { createChannelGate } from '../../src/channels/access.ts';
import type { ChannelAgent, ChannelTurnOptions, OverlapPolicy } from '../../src/channels/types.ts';
import type { InboundFrame } from '../../src/kernel/ports.ts';
import type { TurnResult } from '../../src/agent/types.ts';

const tick = () => new Promise((r) => setImmediate(r));

/** An agent whose turns end only when the test releases them. */
function handAgent(channelTurns = true) {
  const pending: { text: string; opts?: ChannelTurnOptions; signal: AbortSignal; release: (reply?: string) => void; fail: (e: unknown) => void }[] = [];
  let live = 0;
  let peak = 0;
  const agent: ChannelAgent = {
    channelTurns,
    turn(text, signal, opts) {
      live++;
      peak = Math.max(peak, live);
      return new Promise<TurnResult>((resolve, reject) => {
        const done = () => live--;
        pending.push({
          text,
          opts,
          signal,
          release: (reply = `re:${text}`) => (done(), resolve({ reply, outcome: 'message', toolCalls: [], rejections: 0 })),
          fail: (e) => (done(), reject(e)),
        });
        signal.addEventListener('abort', () => (done(), reject(signal.reason)));
      });
    },
  };
  return { agent, pending, peak: () => peak, live: () => live };
}

const silentLog = { debug() {}, info() {}, warn() {}, error() {} };

function setup(policy: OverlapPolicy, maxParallel: number, o: { maxQueue?: number; roles?: boolean; channelTurns?: boolean } = {}) {
  const a = handAgent(o.channelTurns);
  const scheduler = new TriggerScheduler({ maxParallel, overlapPolicy: policy, maxQueue: o.maxQueue });
  const access = o.roles
    ? { mode: 'role-based' as const, roles: [{ id: 'v', role: 'viewer' as const }, { id: 'u', role: 'user' as const }] }
    : { mode: 'open' as const };
  const gate = createChannelGate('q', { type: 'queue', access_control: access }, { now: () => 0, monotonic: () => 0 });
  const runner = createChannelRunner({ channel: 'q', gate, scheduler, getAgent: () => a.agent, log: silentLog });
  const replies = new Map<string, unknown>();
  const send = (id: string | null, params: unknown, method = 'channel.message') => {
    const msg = id === null ? { jsonrpc: '2.0', method, params } : { jsonrpc: '2.0', id, method, params };
    const frame: InboundFrame = { payload: { text: JSON.stringify(msg) }, reply: (m) => replies.set(String(id), m) };
    runner.handle(frame);
  };
  const msg = (id: string, text = id, from = 'u') => send(id, { from, text });
  return { ...a, scheduler, runner, replies, send, msg };
}
const ok = (id: string, reply: string) => ({ jsonrpc: '2.0', id, result: { reply, outcome: 'message', tool_calls: 0 } });
const errOf = (r: unknown) => (r as { error?: { code: number; data?: { reason?: string } } }).error;

test('scheduler defaults: max_parallel 1, overlap_policy skip (spec §5.3 MUST)', () => {
  const s = new TriggerScheduler();
  assert.is(s.maxParallel, 1);
  assert.is(s.overlapPolicy, 'skip');
});

test('skip: at max_parallel a new message is answered -32051 busy and never runs', async () => {
  const t = setup('skip', 2);
  t.msg('1');
  t.msg('2');
  t.msg('3');
  await tick();
  assert.is(t.pending.length, 2);
  assert.equal(errOf(t.replies.get('3')), {
    code: -32051,
    message: 'Channel rate limited: the channel is busy (max_parallel 2, overlap_policy skip); the message was not run',
    data: { channel: 'q', reason: 'busy' },
  });
  t.pending[0].release();
  await tick();
  assert.equal(t.replies.get('1'), ok('1', 're:1'));
  t.msg('4'); // a slot is free again
  await tick();
  assert.equal(t.pending.map((p) => p.text), ['1', '2', '4']);
  t.pending[1].release();
  t.pending[2].release();
  await tick();
  assert.equal(t.replies.get('4'), ok('4', 're:4'));
  assert.is(t.peak(), 2);
  assert.is(t.scheduler.peakRunning, 2);
});

for (const policy of ['queue', 'allow'] as const) {
  test(`${policy}: waits FIFO, starts one per ended turn, never more than max_parallel`, async () => {
    const t = setup(policy, 2);
    for (const id of ['1', '2', '3', '4', '5']) t.msg(id);
    await tick();
    assert.equal(t.pending.map((p) => p.text), ['1', '2']);
    assert.is(t.scheduler.queued, 3);
    assert.is(t.replies.size, 0);
    t.pending[1].release(); // "2" ends first
    await tick();
    assert.equal(t.pending.map((p) => p.text), ['1', '2', '3']);
    assert.is(t.live(), 2);
    t.pending[0].release();
    t.pending[2].release();
    await tick();
    assert.equal(t.pending.map((p) => p.text), ['1', '2', '3', '4', '5']);
    t.pending[3].release();
    t.pending[4].release();
    await tick();
    assert.equal([...t.replies.keys()].sort(), ['1', '2', '3', '4', '5']);
    for (const id of ['1', '2', '3', '4', '5']) assert.equal(t.replies.get(id), ok(id, `re:${id}`));
    assert.is(t.peak(), 2);
    assert.is(t.scheduler.peakRunning, 2);
  });
}

test('queue: bounded; a message arriving at a full queue is skipped (queue_full)', async () => {
  const t = setup('queue', 1, { maxQueue: 1 });
  t.msg('1');
  t.msg('2');
  t.msg('3');
  await tick();
  assert.is(errOf(t.replies.get('3'))?.data?.reason, 'queue_full');
  assert.is(errOf(t.replies.get('3'))?.code, -32051);
  t.pending[0].release();
  await tick();
  t.pending[1].release();
  await tick();
  assert.equal(t.replies.get('2'), ok('2', 're:2'));
});

test('each user gets an own conversation; viewer turns run with tools off', async () => {
  const t = setup('allow', 3, { roles: true });
  t.msg('1', 'a', 'u');
  t.msg('2', 'b', 'v');
  t.msg('3', 'c', 'nobody');
  await tick();
  assert.equal(t.pending.map((p) => p.opts), [
    { channel: 'q', user: 'u', conversation: 'q:u', tools: true },
    { channel: 'q', user: 'v', conversation: 'q:v', tools: false },
  ]);
  assert.is(errOf(t.replies.get('3'))?.code, -32050);
});

test('an agent that cannot turn tools off never runs a viewer turn', async () => {
  const t = setup('allow', 3, { roles: true, channelTurns: false });
  t.msg('1', 'b', 'v');
  await tick();
  assert.is(t.pending.length, 0);
  assert.equal(errOf(t.replies.get('1')), {
    code: -32050,
    message: 'Channel auth failed: read-only (viewer) turns are not available on this agent',
    data: { channel: 'q', reason: 'viewer_unsupported' },
  });
});

test('malformed frames: exact JSON-RPC errors; notifications run without reply', async () => {
  const t = setup('queue', 1);
  const raw = (id: string, text: string) => t.runner.handle({ payload: { text }, reply: (m) => t.replies.set(id, m) });
  raw('parse', '{nope');
  raw('batch', '[]');
  raw('invalid', '{"id":1,"method":"x"}');
  t.send('m', { from: 'u', text: 'x' }, 'claw.status');
  t.send('p1', { from: 'u' });
  t.send('p2', { from: 'u', text: 'x', extra: 1 });
  t.send('p3', ['u', 'x']);
  t.runner.handle({ payload: { error: 'oversize', bytes: 10, limit: 5 }, reply: (m) => t.replies.set('big', m) });
  assert.equal(
    Object.fromEntries([...t.replies].map(([k, v]) => [k, errOf(v)?.code])),
    { parse: -32700, batch: -32600, invalid: -32600, m: -32601, p1: -32602, p2: -32602, p3: -32602, big: -32600 },
  );
  t.send(null, { from: 'u', text: 'note' });
  await tick();
  assert.equal(t.pending.map((p) => p.text), ['note']);
  t.pending[0].release();
  await tick();
  assert.is(t.replies.has('null'), false, 'a notification is never answered');
});

test('provider errors reach the sender as their JSON-RPC error; other failures are generic', async () => {
  const t = setup('queue', 1);
  t.msg('1');
  t.msg('2');
  await tick();
  const { ProtocolError } = await import('../../src/protocol/errors.ts');
  t.pending[0].fail(new ProtocolError(-32020, 'Provider unavailable', { retryable: true }));
  await tick();
  t.pending[1].fail(new Error('secret internals'));
  await tick();
  assert.equal(errOf(t.replies.get('1')), { code: -32020, message: 'Provider unavailable', data: { retryable: true } });
  assert.equal(errOf(t.replies.get('2')), { code: -32603, message: 'Internal error: the turn failed', data: { channel: 'q' } });
});

test('stop: waiting messages are answered, running turns finish within the grace, then are aborted', async () => {
  const t = setup('queue', 1);
  t.msg('1');
  t.msg('2');
  await tick();
  const stopped = t.runner.stop(50);
  await tick();
  assert.is(errOf(t.replies.get('2'))?.data?.reason, 'stopping');
  t.msg('3');
  assert.is(errOf(t.replies.get('3'))?.data?.reason, 'stopping');
  await stopped; // "1" never released: aborted after 50 ms
  assert.ok(t.pending[0].signal.aborted);
  await tick();
  assert.is(errOf(t.replies.get('1'))?.data?.reason, 'cancelled');
});


test('channel.approve / channel.deny: admins only, outside the trigger (a turn waiting for approval does not block it)', async () => {
  const decided: string[] = [];
  const scheduler = new TriggerScheduler({ maxParallel: 1, overlapPolicy: 'skip' });
  const gate = createChannelGate('q', { type: 'queue', access_control: { mode: 'role-based', roles: [{ id: 'boss', role: 'admin' }, { id: 'u', role: 'user' }] } }, { now: () => 0, monotonic: () => 0 });
  const a = handAgent();
  const runner = createChannelRunner({
    channel: 'q',
    gate,
    scheduler,
    getAgent: () => a.agent,
    log: silentLog,
    decide: async (rid, decision, reason) => (decided.push(`${rid}:${decision}:${reason ?? ''}`), rid === 'waiting'),
  });
  const replies = new Map<string, unknown>();
  const send = (id: string, method: string, params: unknown) => runner.handle({ payload: { text: JSON.stringify({ jsonrpc: '2.0', id, method, params }) }, reply: (m) => replies.set(id, m) });
  send('t', 'channel.message', { from: 'u', text: 'do it' }); // occupies the only slot
  send('1', 'channel.approve', { from: 'boss', request_id: 'waiting', reason: 'ok' });
  send('2', 'channel.deny', { from: 'boss', request_id: 'other' });
  send('3', 'channel.approve', { from: 'u', request_id: 'waiting' });
  send('4', 'channel.approve', { from: 'stranger', request_id: 'waiting' });
  send('5', 'channel.approve', { from: 'boss' });
  await tick();
  assert.equal(decided, ['waiting:approved:ok', 'other:denied:']);
  assert.equal(replies.get('1'), { jsonrpc: '2.0', id: '1', result: { acknowledged: true } });
  assert.equal(replies.get('2'), { jsonrpc: '2.0', id: '2', result: { acknowledged: false } });
  assert.equal(errOf(replies.get('3')), { code: -32050, message: 'Channel auth failed: only an admin of this channel may decide approvals', data: { channel: 'q', reason: 'not_admin' } });
  assert.is(errOf(replies.get('4'))?.code, -32050);
  assert.is(errOf(replies.get('5'))?.code, -32602);
  assert.is(replies.has('t'), false);
  // Without a decide port the methods do not exist.
  const plain = setup('skip', 1);
  plain.send('x', { from: 'u', request_id: 'r' }, 'channel.approve');
  assert.is(errOf(plain.replies.get('x'))?.code, -32601);
});


test('every error answer is one telemetry errors event (code, reason; never the sender or the text)', async () => {
  const events: unknown[] = [];
  const telemetry = { emit: (c: string, e: string, f?: Record<string, unknown>) => events.push([c, e, f]), latency() {}, tokenUsage() {}, close: async () => {} };
  const gate = createChannelGate('q', { type: 'queue', access_control: { mode: 'allowlist', allowed_ids: ['u'] } }, { now: () => 0, monotonic: () => 0 });
  const a = handAgent();
  const runner = createChannelRunner({ channel: 'q', gate, scheduler: new TriggerScheduler(), getAgent: () => a.agent, log: silentLog, telemetry });
  const frame = (text: string) => ({ payload: { text }, reply() {} });
  runner.handle(frame(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'channel.message', params: { from: 'secret-user', text: 'secret text' } })));
  runner.handle(frame('{oops'));
  runner.handle(frame(JSON.stringify({ jsonrpc: '2.0', method: 'channel.message', params: { from: 'x', text: 'unanswered' } })));
  runner.handle(frame(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'channel.message', params: { from: 'u', text: 'ok' } })));
  await tick();
  assert.equal(events, [
    ['errors', 'channel.error', { channel: 'q', code: -32050, reason: 'not_allowed' }],
    ['errors', 'channel.error', { channel: 'q', code: -32700, reason: undefined }],
  ]);
  assert.not.match(JSON.stringify(events), /secret/);
});

test.run();
