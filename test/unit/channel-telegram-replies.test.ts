// Replies through the fake Bot API over HTTP (test/helpers/fake-telegram.ts, which refuses a text that is
// only white space as Telegram does: 400 "message text is empty").
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTelegramChannel, type TelegramChannel } from '../../src/channels/telegram/channel.ts';
import { startFakeTelegram, type FakeTelegram } from '../helpers/fake-telegram.ts';

const TOKEN = '4343:replies-test-token';
const secrets = { resolve: async () => TOKEN } as any;
const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent } as any;
const binding = (fake: FakeTelegram) => ({ api_url: fake.url, poll_timeout_s: 1, retry: { initial_delay_ms: 50, max_delay_ms: 200 }, network: { mode: 'allowlist', allowed_hosts: ['127.0.0.1'], ssrf_protection: { enabled: false } } }) as any;

async function withChannel(answer: (text: string) => unknown, body: (fake: FakeTelegram) => Promise<void>, processing: any = { typing_indicator: false }) {
  const fake = await startFakeTelegram();
  const dir = mkdtempSync(join(tmpdir(), 'claw-tg-replies-'));
  let ch: TelegramChannel | undefined;
  try {
    const spec = { type: 'telegram', transport: 'polling', auth: { secret_ref: 'T' }, processing } as any;
    ch = await openTelegramChannel({ channel: 'tg', spec, binding: binding(fake), log: silent, dataDir: dir, secrets, clock: {} as any });
    ch.start((frame) => {
      const m = JSON.parse((frame.payload as { text: string }).text);
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

test.run();
