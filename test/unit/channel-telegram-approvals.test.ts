// Who a Telegram approval question goes to (docs/channels.md "Telegram", Approvals): the user whose turn
// announced it, through the real channel runner and trigger scheduler — never a Telegram user for a call
// another origin made (an operator, an A2A task) just because their own turn happens to be running.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTelegramChannel } from '../../src/channels/telegram/channel.ts';
import { createChannelGate } from '../../src/channels/access.ts';
import { createChannelRunner } from '../../src/channels/runner.ts';
import { TriggerScheduler } from '../../src/channels/trigger.ts';

const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent } as any;
const secrets = { resolve: async () => '123:secret-token-value' } as any;
const access = { mode: 'allowlist', allowed_ids: ['1', '2'] };
const spec = { type: 'telegram', transport: 'polling', auth: { secret_ref: 'TOKEN' }, access_control: access } as any;
const msg = (id: number, from: number, text: string) => ({ update_id: id, message: { message_id: id, from: { id: from }, chat: { id: from }, text } });
const approval = (id: string, tool: string, timeout_seconds = 60) => ({ jsonrpc: '2.0', method: 'claw.tool.approval_requested', params: { request_id: id, tool, arguments: { text: `plan of ${tool}` }, timeout_seconds } }) as any;
const tick = (ms = 30) => new Promise((r) => setTimeout(r, ms));

/**
 * A channel over a scripted Bot API whose first getUpdates serves `updates`, with the real runner and trigger
 * scheduler over an agent whose turns announce an approval (as the approval gate does, inside the turn) and
 * then wait until the test ends them.
 */
async function open(updates: unknown[], trigger: { maxParallel: number; overlapPolicy: 'queue' | 'allow' }, dir = mkdtempSync(join(tmpdir(), 'claw-tg-approvals-')), timeoutS = 60) {
  const calls: { method: string; params: any }[] = [];
  const queue = [updates];
  let wake = () => {};
  const fetch = async (url: string, init: any) => {
    const method = url.slice(url.lastIndexOf('/') + 1);
    calls.push({ method, params: JSON.parse(init.body) });
    if (method === 'getUpdates') {
      while (queue.length === 0 && !init.signal?.aborted) await new Promise<void>((r) => ((wake = r), init.signal?.addEventListener('abort', () => r(), { once: true })));
      if (queue.length === 0) throw new Error('aborted');
      return { status: 200, headers: {}, body: JSON.stringify({ ok: true, result: queue.shift() }), truncated: false } as any;
    }
    return { status: 200, headers: {}, body: JSON.stringify({ ok: true, result: { message_id: calls.length } }), truncated: false } as any;
  };
  const decided: [string, string][] = [];
  const decide = async (id: string, d: string) => (decided.push([id, d]), true);
  const ch = await openTelegramChannel({ channel: 'tg', spec, binding: { network: { mode: 'allow-all' } }, log: silent, dataDir: dir, secrets, clock: {} as any, decide: decide as any, fetch: fetch as any });
  const gate = ch.observe(createChannelGate('tg', spec, { now: Date.now, monotonic: () => performance.now() }));
  const ends = new Map<string, () => void>();
  const agent = {
    channelTurns: true as const,
    async turn(text: string, _signal: AbortSignal, o: any) {
      await tick(5);
      ch.notify(approval(`r-${o.user}`, text, timeoutS));
      await new Promise<void>((r) => ends.set(o.user, r));
      return { reply: 'done', outcome: 'message' as const, toolCalls: [], rejections: 0 };
    },
  };
  const runner = createChannelRunner({ channel: 'tg', gate, scheduler: new TriggerScheduler(trigger), getAgent: () => agent, log: silent });
  ch.start((frame) => runner.handle(frame));
  const asked = () => calls.filter((c) => c.method === 'sendMessage' && c.params.reply_markup).map((c) => [c.params.chat_id, c.params.text]);
  const buttons = () => calls.filter((c) => c.method === 'sendMessage' && c.params.reply_markup).map((c) => c.params.reply_markup.inline_keyboard[0].map((b: any) => b.callback_data));
  const serve = (u: unknown[]) => (queue.push(u), wake());
  return { ch, asked, buttons, serve, decided, calls, end: (user: string) => ends.get(user)?.(), close: () => ch.close(), done: async () => (await ch.close(), rmSync(dir, { recursive: true, force: true })) };
}

test("an approval announced outside this channel's turns is not asked here, even while a user's turn runs", async () => {
  const c = await open([msg(10, 1, 'echo')], { maxParallel: 1, overlapPolicy: 'queue' });
  try {
    await tick(80);
    assert.equal(c.asked(), [[1, 'Approval needed: tool echo {"text":"plan of echo"}']]);
    // Another origin's call (no turn of this channel made it): user 1 neither sees nor decides it.
    c.ch.notify(approval('r-operator', 'shell'));
    await tick();
    assert.equal(c.asked().length, 1, JSON.stringify(c.asked()));
  } finally {
    await c.done();
  }
});

test('each approval goes to the user whose turn announced it: with two users in flight, and for a turn that waited in the queue', async () => {
  const both = await open([msg(10, 1, 'echo'), msg(11, 2, 'list')], { maxParallel: 2, overlapPolicy: 'allow' });
  try {
    await tick(80);
    assert.equal(both.asked().sort(), [[1, 'Approval needed: tool echo {"text":"plan of echo"}'], [2, 'Approval needed: tool list {"text":"plan of list"}']]);
  } finally {
    await both.done();
  }
  // max_parallel 1: user 2's turn starts when user 1's ends, from user 1's completion.
  const queued = await open([msg(10, 1, 'echo'), msg(11, 2, 'list')], { maxParallel: 1, overlapPolicy: 'queue' });
  try {
    await tick(80);
    assert.equal(queued.asked(), [[1, 'Approval needed: tool echo {"text":"plan of echo"}']]);
    queued.end('1');
    await tick(80);
    assert.equal(queued.asked(), [[1, 'Approval needed: tool echo {"text":"plan of echo"}'], [2, 'Approval needed: tool list {"text":"plan of list"}']]);
  } finally {
    await queued.done();
  }
});

test("a button of an earlier run's question decides nothing in this one, though a new question may have the same number", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-tg-approvals-'));
  const open2: { close(): Promise<void> }[] = [];
  try {
    const first = await open([msg(10, 1, 'echo')], { maxParallel: 1, overlapPolicy: 'queue' }, dir);
    open2.push(first);
    await tick(80);
    const [[okOld]] = first.buttons();
    await first.close();
    // The restart: a new turn of the same user asks about another tool.
    const second = await open([msg(11, 1, 'shell')], { maxParallel: 1, overlapPolicy: 'queue' }, dir);
    open2.push(second);
    await tick(80);
    assert.equal(second.asked(), [[1, 'Approval needed: tool shell {"text":"plan of shell"}']]);
    second.serve([{ update_id: 12, callback_query: { id: 'q1', from: { id: 1 }, data: okOld } }]);
    await tick(80);
    assert.equal(second.decided, [], 'the press was on the question about echo, not shell');
    const [[okNew]] = second.buttons();
    second.serve([{ update_id: 13, callback_query: { id: 'q2', from: { id: 1 }, data: okNew } }]);
    await tick(80);
    assert.equal(second.decided, [['r-1', 'approved']]);
  } finally {
    for (const c of open2) await c.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an approval waiting longer than a timer holds (timeout_seconds of 30 days) stays open: a press decides it', async () => {
  // Node keeps a timer of at most 2^31 - 1 ms (24.8 days); a longer one fires after 1 ms, closing the question at once.
  const c = await open([msg(10, 1, 'echo')], { maxParallel: 1, overlapPolicy: 'queue' }, undefined, 30 * 86_400);
  try {
    await tick(80);
    const [[ok]] = c.buttons();
    c.serve([{ update_id: 11, callback_query: { id: 'q1', from: { id: 1 }, data: ok } }]);
    await tick(80);
    assert.equal(c.decided, [['r-1', 'approved']]);
  } finally {
    await c.done();
  }
});

test.run();
