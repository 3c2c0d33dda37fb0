// The channel against the fake Bot API over HTTP (test/helpers/fake-telegram.ts, which serves getUpdates as
// Telegram's update queue does): update ids that start over lower (Bot API, Update.update_id: after a week
// without updates the next id is random), and a restart on the same data_dir, answer each message exactly once.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTelegramChannel, type TelegramChannel } from '../../src/channels/telegram/channel.ts';
import { startFakeTelegram, type FakeTelegram } from '../helpers/fake-telegram.ts';
import { fileTelegramState, telegramStateDir } from '../../src/channels/telegram/state.ts';

const TOKEN = '4242:queue-test-token';
const spec = { type: 'telegram', transport: 'polling', auth: { secret_ref: 'TOKEN' }, processing: { typing_indicator: false } } as any;
const secrets = { resolve: async () => TOKEN } as any;
const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent } as any;

async function open(fake: FakeTelegram, dataDir: string): Promise<TelegramChannel> {
  const binding = { api_url: fake.url, poll_timeout_s: 1, retry: { initial_delay_ms: 50, max_delay_ms: 200 }, network: { mode: 'allowlist', allowed_hosts: ['127.0.0.1'], ssrf_protection: { enabled: false } } } as any;
  const ch = await openTelegramChannel({ channel: 'tg', spec, binding, log: silent, dataDir, secrets, clock: {} as any });
  ch.start((frame) => {
    const m = JSON.parse((frame.payload as { text: string }).text);
    frame.reply({ jsonrpc: '2.0', id: m.id, result: { reply: `re: ${m.params.text}` } } as any);
  });
  return ch;
}
/** A fake Bot API and a data dir for one test; `start` opens the channel on them (closing the one open first). */
async function withBot(body: (fake: FakeTelegram, dir: string, start: () => Promise<TelegramChannel>) => Promise<void>): Promise<void> {
  const fake = await startFakeTelegram();
  const dir = mkdtempSync(join(tmpdir(), 'claw-tg-queue-'));
  let ch: TelegramChannel | undefined;
  try {
    await body(fake, dir, async () => {
      await ch?.close();
      ch = undefined;
      return (ch = await open(fake, dir));
    });
  } finally {
    await ch?.close();
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
const replies = (fake: FakeTelegram) => fake.sent(TOKEN, 42).map((c) => c.params.text as string);
const polls = (fake: FakeTelegram) => fake.calls.filter((c) => c.method === 'getUpdates').length;

test('update ids that start over below the offset are served, not skipped forever in a busy poll; a restart replays nothing', async () => {
  await withBot(async (fake, dir, start) => {
    await start();
    fake.message(TOKEN, 42, 'one'); // update 500
    await fake.waitFor(() => replies(fake).includes('re: one'), 5000, 'first reply');
    // The queue starts over at 100: the channel's offset (501) is past its tail, so the server serves from its head.
    fake.restartQueue(TOKEN, 100);
    fake.message(TOKEN, 42, 'two'); // update 100
    const before = polls(fake);
    const t0 = Date.now();
    // Before: update 100 was below the offset, skipped, never confirmed and served again at once, forever:
    // ~hundreds of getUpdates a second and no answer.
    await fake.waitFor(() => replies(fake).includes('re: two'), 3000, 'reply after the queue started over').catch((e) => {
      throw new Error(`${e.message}; ${polls(fake) - before} getUpdates in ${Date.now() - t0} ms`);
    });
    await new Promise((r) => setTimeout(r, 500));
    assert.ok(polls(fake) - before < 10, `${polls(fake) - before} getUpdates`);
    fake.message(TOKEN, 42, 'three'); // update 101
    await fake.waitFor(() => replies(fake).includes('re: three'), 3000, 'next reply');
    // A restart on the same state: the offset (102) is inside the restarted queue; nothing is served twice.
    await start();
    fake.message(TOKEN, 42, 'four');
    await fake.waitFor(() => replies(fake).includes('re: four'), 5000, 'reply after restart');
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(replies(fake), ['re: one', 're: two', 're: three', 're: four']);
  });
});

test('a crash between journaling a message and moving the offset: the message is served again and answered once, not also "interrupted"', async () => {
  await withBot(async (fake, dir, start) => {
    const id = fake.message(TOKEN, 42, 'cut off'); // update 500, never confirmed
    // What the first run left: the message journaled, the offset not yet past it (state.ts: accept, then advance).
    const state = fileTelegramState(telegramStateDir(dir, 'tg'));
    state.advance(id);
    state.accept([{ update_id: id, chat_id: 42, message_id: 1 }]);
    await start();
    await fake.waitFor(() => replies(fake).includes('re: cut off'), 5000, 'the served message answered');
    await new Promise((r) => setTimeout(r, 300));
    // Before: also "The agent restarted before answering your message… Please send it again." for a message
    // that was then answered, and that notice removed the journal entry of the run answering it.
    assert.equal(replies(fake), ['re: cut off']);
    assert.equal(fileTelegramState(telegramStateDir(dir, 'tg')).interrupted(), []);
  });
});

test('a getUpdates answer too large to read: fewer updates are asked for, every message is answered, and one update too large alone is skipped', async () => {
  await withBot(async (fake, dir, start) => {
    // Six messages of ~1 MiB each (entities): any answer of four or more is over the 4 MiB the channel reads.
    for (let i = 0; i < 6; i++) fake.bulky(TOKEN, 42, `big ${i}`, 1024 * 1024);
    // One update alone over the limit, then a plain message after it.
    fake.bulky(TOKEN, 42, 'huge', 5 * 1024 * 1024);
    fake.message(TOKEN, 42, 'after');
    await start();
    // Before: the same request, the same oversize answer, retried with backoff for ever, and no reply at all.
    await fake.waitFor(() => replies(fake).includes('re: after'), 15_000, 'the message after the large ones');
    assert.equal(replies(fake), ['re: big 0', 're: big 1', 're: big 2', 're: big 3', 're: big 4', 're: big 5', 're: after']);
    const limits = fake.calls.filter((c) => c.method === 'getUpdates').map((c) => c.params.limit);
    assert.ok(limits.includes(2) && limits.includes(1), `limits asked: ${limits.join(',')}`);
    // Back towards full batches once answers fit again: doubled after each one (an idle long poll takes 1 s here,
    // so 100 is seven polls away; 16 is enough to see the doubling).
    fake.message(TOKEN, 42, 'later');
    await fake.waitFor(() => replies(fake).includes('re: later'), 5000, 'a later message');
    const asked = () => fake.calls.filter((x) => x.method === 'getUpdates').map((x) => x.params.limit as number);
    await fake.waitFor(() => asked().at(-1)! >= 16, 10_000, 'the limit growing again');
    const after = asked().slice(asked().lastIndexOf(1));
    after.slice(1).forEach((l, i) => assert.ok(l === Math.min(after[i] * 2, 100), `limits after the smallest: ${after.join(',')}`));
  });
});

test.run();
