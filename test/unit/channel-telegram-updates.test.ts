// Hostile getUpdates answers (docs/channels.md "Telegram"): a null entry, a message without chat, an
// update_id that cannot confirm anything, a callback_query without from. Each is skipped with a warning
// that carries none of its text, the offset moves past it, and the next good message is still answered.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTelegramChannel } from '../../src/channels/telegram/channel.ts';
import { fileTelegramState, telegramStateDir } from '../../src/channels/telegram/state.ts';

const spec = { type: 'telegram', transport: 'polling', auth: { secret_ref: 'TOKEN' } } as any;
const secrets = { resolve: async () => '123:token' } as any;
const SECRET = 'do-not-log-this';
const msg = (id: number, text = 'hello') => ({ update_id: id, message: { message_id: id, from: { id: 42 }, chat: { id: 42 }, text } });

/** A channel whose getUpdates serves `batches` in turn (then waits for close), with an answering runner. */
async function run(batches: unknown[][], until: (calls: { method: string; params: any; at: number }[]) => boolean) {
  const calls: { method: string; params: any; at: number }[] = [];
  const warnings: string[] = [];
  const rejections: unknown[] = [];
  const onRejection = (e: unknown) => rejections.push(e);
  process.on('unhandledRejection', onRejection);
  const log = { debug() {}, info() {}, warn: (m: string, f: unknown) => warnings.push(`${m} ${JSON.stringify(f)}`), error: (m: string, f: unknown) => warnings.push(`${m} ${JSON.stringify(f)}`) } as any;
  let served = 0;
  const fetch = async (url: string, init: any) => {
    const method = url.slice(url.lastIndexOf('/') + 1);
    calls.push({ method, params: JSON.parse(init.body), at: Date.now() });
    if (method === 'getUpdates') {
      if (served < batches.length) return { status: 200, headers: {}, body: JSON.stringify({ ok: true, result: batches[served++] }), truncated: false } as any;
      await new Promise((r) => init.signal?.addEventListener('abort', r, { once: true }));
      throw new Error('aborted');
    }
    return { status: 200, headers: {}, body: JSON.stringify({ ok: true, result: { message_id: 1 } }), truncated: false } as any;
  };
  const dir = mkdtempSync(join(tmpdir(), 'claw-tg-upd-'));
  const ch = await openTelegramChannel({ channel: 'tg', spec, binding: { network: { mode: 'allow-all' } }, log, dataDir: dir, secrets, clock: {} as any, fetch: fetch as any });
  try {
    ch.start((frame) => {
      const m = JSON.parse((frame.payload as { text: string }).text);
      frame.reply({ jsonrpc: '2.0', id: m.id, result: { reply: `re: ${m.params.text}` } } as any);
    });
    const deadline = Date.now() + 4000;
    while (!until(calls) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 20)); // a late rejection or log line still counts
    return { calls, warnings, rejections, offsets: calls.filter((c) => c.method === 'getUpdates').map((c) => c.params.offset) };
  } finally {
    await ch.close();
    process.off('unhandledRejection', onRejection);
    rmSync(dir, { recursive: true, force: true });
  }
}
const answered = (calls: { method: string; params: any }[], text: string) => calls.some((c) => c.method === 'sendMessage' && c.params.chat_id === 42 && c.params.text === text);
const polls = (n: number) => (calls: { method: string }[]) => calls.filter((c) => c.method === 'getUpdates').length >= n;

test('a null entry cannot break sorting: skipped with a warning, the good message next to it answered', async () => {
  const r = await run([[null, msg(11)]], polls(2));
  assert.ok(answered(r.calls, 're: hello'), JSON.stringify(r.calls));
  assert.equal(r.offsets, [0, 12]);
  assert.ok(r.warnings.some((w) => w.includes('without a usable update_id')), r.warnings.join('\n'));
});

test('a message without chat is skipped, confirmed (offset past it) and polling goes on to the next message', async () => {
  const noChat = { update_id: 10, message: { message_id: 1, from: { id: 42 }, text: SECRET } };
  const r = await run([[noChat], [msg(11)]], polls(3));
  assert.equal(r.offsets, [0, 11, 12]);
  assert.ok(answered(r.calls, 're: hello'));
  assert.ok(r.warnings.some((w) => w.includes('"update_id":10')), r.warnings.join('\n'));
  assert.not.ok(r.warnings.join('\n').includes(SECRET), 'no message text in the log');
});

test('an update_id that is not an integer is skipped with a warning; a batch of nothing else is paced, not re-fetched at once', async () => {
  const bad = { update_id: 10.5, message: { message_id: 1, from: { id: 42 }, chat: { id: 42 }, text: SECRET } };
  const r = await run([[bad], [{ ...bad, update_id: '11' }, msg(12)]], polls(3));
  assert.equal(r.offsets, [0, 0, 13]);
  const getUpdates = r.calls.filter((c) => c.method === 'getUpdates');
  assert.ok(getUpdates[1].at - getUpdates[0].at >= 900, 'paced');
  assert.ok(answered(r.calls, 're: hello'));
  assert.not.ok(answered(r.calls, `re: ${SECRET}`), 'an unconfirmable update never runs');
  assert.is(r.warnings.filter((w) => w.includes('without a usable update_id')).length, 2, r.warnings.join('\n'));
  assert.not.ok(r.warnings.join('\n').includes(SECRET));
});

test('a callback_query without from, or an unsupported kind, is skipped without an unhandled rejection', async () => {
  const r = await run([[{ update_id: 12, callback_query: { id: 'q1', data: 'ok:1' } }, { update_id: 13, edited_message: msg(13).message }, msg(14)]], polls(2));
  assert.equal(r.rejections, []);
  assert.equal(r.offsets, [0, 15]);
  assert.ok(answered(r.calls, 're: hello'));
  assert.not.ok(r.calls.some((c) => c.method === 'answerCallbackQuery'));
  assert.ok(r.warnings.some((w) => w.includes('"update_id":12') && w.includes('callback_query')), r.warnings.join('\n'));
  assert.ok(r.warnings.some((w) => w.includes('"update_id":13')), r.warnings.join('\n'));
});

test('a getUpdates answer of thousands of entries is taken 100 at a time, and polling waits while 100 answers are still going out', async () => {
  // Before: one answer of 20,000 entries held the event loop 42 s (two fsyncs each) and put 20,000 sendMessage in flight.
  const N = 500;
  const batch = Array.from({ length: N }, (_, i) => ({ update_id: i + 1, message: { message_id: i + 1, from: { id: 1000 + i }, chat: { id: 1000 + i }, text: 'hi' } }));
  const limits: unknown[] = [];
  let inflight = 0;
  let maxInflight = 0;
  let sent = 0;
  const fetch = async (url: string, init: any) => {
    const params = JSON.parse(init.body);
    if (url.endsWith('/getUpdates')) {
      limits.push(params.limit);
      const rest = batch.filter((u) => u.update_id >= params.offset);
      if (rest.length > 0) return { status: 200, headers: {}, body: JSON.stringify({ ok: true, result: rest }), truncated: false } as any;
      await new Promise((r) => init.signal?.addEventListener('abort', r, { once: true }));
      throw new Error('aborted');
    }
    maxInflight = Math.max(maxInflight, ++inflight);
    await new Promise((r) => setTimeout(r, 20));
    inflight--;
    sent++;
    return { status: 200, headers: {}, body: JSON.stringify({ ok: true, result: { message_id: 1 } }), truncated: false } as any;
  };
  const dir = mkdtempSync(join(tmpdir(), 'claw-tg-upd-'));
  const log = { debug() {}, info() {}, warn() {}, error() {} } as any;
  const ch = await openTelegramChannel({ channel: 'tg', spec, binding: { network: { mode: 'allow-all' } }, log, dataDir: dir, secrets, clock: {} as any, fetch: fetch as any });
  let last = Date.now();
  let maxGap = 0;
  const iv = setInterval(() => {
    maxGap = Math.max(maxGap, Date.now() - last);
    last = Date.now();
  }, 5);
  try {
    ch.start((frame) => {
      const m = JSON.parse((frame.payload as { text: string }).text);
      frame.reply({ jsonrpc: '2.0', id: m.id, error: { code: -32051, message: 'Channel rate limited: busy' } } as any);
    });
    const deadline = Date.now() + 20_000;
    while (sent < N && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.is(sent, N, 'every message answered');
    assert.ok(limits.every((l) => l === 100), JSON.stringify(limits.slice(0, 5)));
    assert.ok(maxInflight <= 200, `${maxInflight} sendMessage in flight`);
    assert.ok(maxGap < 1500, `event loop held ${maxGap} ms`);
  } finally {
    clearInterval(iv);
    await ch.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('one getUpdates answer is journaled in one fsynced file and confirmed by one offset write; a crash then finds every unanswered message, and each answer removes only its own', async () => {
  const N = 60;
  const held: (() => void)[] = [];
  const fetch = async (url: string, init: any) => {
    if (url.endsWith('/getUpdates')) {
      if (JSON.parse(init.body).offset <= 1) return { status: 200, headers: {}, body: JSON.stringify({ ok: true, result: Array.from({ length: N }, (_, i) => msg(i + 1)) }), truncated: false } as any;
      await new Promise((r) => init.signal?.addEventListener('abort', r, { once: true }));
      throw new Error('aborted');
    }
    await new Promise<void>((r) => held.push(r)); // the answers wait: nothing leaves pending/ yet
    return { status: 200, headers: {}, body: JSON.stringify({ ok: true, result: { message_id: 1 } }), truncated: false } as any;
  };
  const dir = mkdtempSync(join(tmpdir(), 'claw-tg-batch-'));
  const log = { debug() {}, info() {}, warn() {}, error() {} } as any;
  const ch = await openTelegramChannel({ channel: 'tg', spec, binding: { network: { mode: 'allow-all' } }, log, dataDir: dir, secrets, clock: {} as any, fetch: fetch as any });
  const pending = join(telegramStateDir(dir, 'tg'), 'pending');
  try {
    ch.start((frame) => {
      const m = JSON.parse((frame.payload as { text: string }).text);
      frame.reply({ jsonrpc: '2.0', id: m.id, result: { reply: 'ok' } } as any);
    });
    for (let i = 0; i < 250 && held.length < N; i++) await new Promise((r) => setTimeout(r, 20));
    assert.is(held.length, N, 'every answer is going out');
    assert.equal(readdirSync(pending), ['1.json'], 'one journal file for the answer of 60 updates');
    const crashed = fileTelegramState(telegramStateDir(dir, 'tg'));
    assert.is(crashed.offset(), N + 1);
    assert.equal(crashed.interrupted().map((p) => p.update_id), Array.from({ length: N }, (_, i) => i + 1));
    held.splice(0, 10).forEach((r) => r());
    for (let i = 0; i < 100 && fileTelegramState(telegramStateDir(dir, 'tg')).interrupted().length > N - 10; i++) await new Promise((r) => setTimeout(r, 20));
    assert.is(fileTelegramState(telegramStateDir(dir, 'tg')).interrupted().length, N - 10, 'ten answered, fifty still journaled');
    held.splice(0).forEach((r) => r());
    for (let i = 0; i < 100 && readdirSync(pending).length > 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(readdirSync(pending), [], 'all answered: the file is gone');
  } finally {
    held.splice(0).forEach((r) => r());
    await ch.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
