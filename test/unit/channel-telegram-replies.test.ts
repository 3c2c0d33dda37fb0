// Replies through the fake Bot API over HTTP (test/helpers/fake-telegram.ts, which refuses a text that is
// only white space as Telegram does: 400 "message text is empty").
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTelegramChannel, type TelegramChannel } from '../../src/channels/telegram/channel.ts';
import { startFakeTelegram, type FakeTelegram } from '../helpers/fake-telegram.ts';
import { fileTelegramState, telegramStateDir } from '../../src/channels/telegram/state.ts';

const TOKEN = '4343:replies-test-token';
const secrets = { resolve: async () => TOKEN } as any;
const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent } as any;
const binding = (fake: FakeTelegram) => ({ api_url: fake.url, poll_timeout_s: 1, retry: { initial_delay_ms: 50, max_delay_ms: 200 }, network: { mode: 'allowlist', allowed_hosts: ['127.0.0.1'], ssrf_protection: { enabled: false } } }) as any;

async function withChannel(answer: (text: string) => unknown, body: (fake: FakeTelegram) => Promise<void>, processing: any = { typing_indicator: false }, letThrough = false, setup?: (fake: FakeTelegram) => void) {
  const fake = await startFakeTelegram();
  setup?.(fake);
  const dir = mkdtempSync(join(tmpdir(), 'claw-tg-replies-'));
  let ch: TelegramChannel | undefined;
  try {
    const spec = { type: 'telegram', transport: 'polling', auth: { secret_ref: 'T' }, processing } as any;
    ch = await openTelegramChannel({ channel: 'tg', spec, binding: binding(fake), log: silent, dataDir: dir, secrets, clock: {} as any });
    // The runner's gate, as seen by the channel: it shows "typing…" only to a sender let through.
    const gate = ch.observe({ channel: 'tg', check: (user: string) => ({ allow: true, user, role: 'user', tools: true, mayApprove: false }) } as any);
    ch.start((frame) => {
      const m = JSON.parse((frame.payload as { text: string }).text);
      if (letThrough) gate.check(m.params.from, m.params.text);
      const r = answer(m.params.text);
      if (r !== undefined) frame.reply({ jsonrpc: '2.0', id: m.id, ...(r as object) } as any);
    });
    await body(fake);
  } finally {
    await ch?.close();
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
const delivered = (fake: FakeTelegram) => fake.sent(TOKEN, 42).map((c) => c.params.text as string).filter((t) => t.trim());

test('a reply with a lone surrogate (cut inside an emoji) still reaches the user, with U+FFFD in its place', async () => {
  await withChannel(
    () => ({ result: { reply: 'cut \ud83d here, and \ude00 there, kept \ud83d\ude00' } }),
    async (fake) => {
      fake.message(TOKEN, 42, 'hi');
      await fake.waitFor(() => fake.sent(TOKEN, 42).length > 0, 5000, 'a send');
      await new Promise((r) => setTimeout(r, 300));
      // Before: the text went out with "\ud83d" escapes, Telegram refused it (400, UTF-8 only), and the user got nothing.
      assert.equal(fake.sent(TOKEN, 42).map((c) => c.params.text), ['cut \ufffd here, and \ufffd there, kept \ud83d\ude00']);
    },
  );
});

test('a reply or an error message of only white space still answers the user', async () => {
  await withChannel(
    (text) => (text === 'blank' ? { result: { reply: ' \n\n \u3000\n' } } : { error: { code: -32603, message: '  ' } }),
    async (fake) => {
      fake.message(TOKEN, 42, 'blank');
      fake.message(TOKEN, 42, 'failing');
      // Before: " \n\n \u3000\n" and "  " were sent as they were, refused 400 "message text is empty" (an API
      // refusal, not retried), and the user got nothing at all.
      await fake.waitFor(() => delivered(fake).length === 2, 5000, 'two answers');
      assert.equal(delivered(fake), ['(no reply)', 'Internal error']);
    },
  );
});

test('messages of one chat waiting for their turns share one typing indicator', async () => {
  await withChannel(
    () => undefined, // every turn still running
    async (fake) => {
      for (let i = 0; i < 30; i++) fake.message(TOKEN, 42, `m${i}`);
      await fake.waitFor((calls) => calls.some((c) => c.method === 'getUpdates' && c.params.offset > 529), 5000, 'all 30 taken');
      await new Promise((r) => setTimeout(r, 1000));
      // Before: one sendChatAction per waiting message, every 4.5 s (30 at once here, ~6.7 a second for one chat).
      assert.is(fake.calls.filter((c) => c.method === 'sendChatAction' && c.params.chat_id === 42).length, 1);
    },
    {},
    true,
  );
});

test('a long reply stops at a piece Telegram refused: no later piece reads as if nothing were missing', async () => {
  const [a, b, c] = ['a', 'b', 'c'].map((x) => x.repeat(3000));
  await withChannel(
    () => ({ result: { reply: `${a}\n\n${b}\n\n${c}` } }),
    async (fake) => {
      fake.message(TOKEN, 42, 'long');
      await fake.waitFor(() => fake.sent(TOKEN, 42).length >= 1, 5000, 'first piece');
      await new Promise((r) => setTimeout(r, 500));
      // Before: the first piece, the refused second, then the third: an answer with a hole in the middle.
      assert.equal(fake.sent(TOKEN, 42).map((x) => (x.params.text as string)[0]), ['a', 'b']);
    },
    undefined,
    false,
    (fake) => fake.fail(TOKEN, 'sendMessage', { kind: '400' }, 1, 1),
  );
});

test('an answer a 429 holds back at stop keeps its journal entry: the next start says the message was cut off', async () => {
  const fake = await startFakeTelegram();
  const dir = mkdtempSync(join(tmpdir(), 'claw-tg-replies-'));
  const spec = { type: 'telegram', transport: 'polling', auth: { secret_ref: 'T' }, processing: { typing_indicator: false } } as any;
  let ch: TelegramChannel | undefined;
  try {
    let reply: (() => void) | undefined;
    ch = await openTelegramChannel({ channel: 'tg', spec, binding: binding(fake), log: silent, dataDir: dir, secrets, clock: {} as any });
    ch.start((frame) => {
      const m = JSON.parse((frame.payload as { text: string }).text);
      reply = () => frame.reply({ jsonrpc: '2.0', id: m.id, result: { reply: 'late answer' } } as any);
    });
    fake.message(TOKEN, 42, 'slow question');
    await fake.waitFor(() => reply !== undefined, 5000, 'message handed over');
    fake.fail(TOKEN, 'sendMessage', { kind: '429', retryAfter: 30 });
    const closing = ch.close();
    reply!(); // the turn ends while the channel stops, and Telegram says "wait 30 s"
    await closing;
    ch = undefined;
    await fake.waitFor(() => fake.sent(TOKEN, 42).length === 1, 5000, 'the refused attempt');
    await new Promise((r) => setTimeout(r, 200));
    // Before: the pending entry was removed as if answered; the user never heard back, not even at the next start.
    assert.equal(fileTelegramState(telegramStateDir(dir, 'tg')).interrupted().map((p) => p.chat_id), [42]);
    ch = await openTelegramChannel({ channel: 'tg', spec, binding: binding(fake), log: silent, dataDir: dir, secrets, clock: {} as any });
    ch.start(() => {});
    await fake.waitFor(() => fake.sent(TOKEN, 42).some((c) => /^The agent restarted before answering/.test(c.params.text)), 5000, 'the cut-off notice');
  } finally {
    await ch?.close();
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a group upgraded to a supergroup while its turn ran: the reply goes to the new chat id (400 migrate_to_chat_id), and so does the next one', async () => {
  await withChannel(
    (text) => ({ result: { reply: `re: ${text}` } }),
    async (fake) => {
      fake.message(TOKEN, 42, 'first', -100);
      await fake.waitFor((c) => c.some((x) => x.method === 'sendMessage' && x.params.text === 're: first'), 5000, 'first reply');
      fake.migrateChat(TOKEN, -100, -1001);
      fake.message(TOKEN, 42, 'second', -100); // sent in the group just before the upgrade
      fake.message(TOKEN, 42, 'third', -100);
      await fake.waitFor((c) => c.filter((x) => x.method === 'sendMessage' && x.params.chat_id === -1001).length === 2, 5000, 'replies in the supergroup');
      assert.equal(fake.sent(TOKEN, -1001).map((c) => c.params.text).sort(), ['re: second', 're: third']);
      const refused = fake.sent(TOKEN, -100).length;
      fake.message(TOKEN, 42, 'fourth', -100); // a client that has not caught up yet
      await fake.waitFor((c) => c.some((x) => x.params.chat_id === -1001 && x.params.text === 're: fourth'), 5000, 'the fourth reply');
      assert.is(fake.sent(TOKEN, -100).length, refused, 'once learnt, the new id is used straight away');
    },
  );
});

test.run();
