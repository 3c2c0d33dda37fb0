// A stranger on an allowlist or role-based Telegram channel learns nothing from the bot (docs/channels.md
// "Telegram", Refusals): not by flooding past the rate limit, not by sending an over-long or empty message.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTelegramChannel } from '../../src/channels/telegram/channel.ts';
import { createChannelGate } from '../../src/channels/access.ts';
import { memoryPairingStorage } from '../../src/channels/pairing-store.ts';

const secrets = { resolve: async () => '77:strangers-token' } as any;
const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent } as any;
const ok = (result: unknown) => ({ status: 200, headers: {}, body: JSON.stringify({ ok: true, result }), truncated: false }) as any;

/** Serves `updates` once; the runner answers as the channel runner does (a refusal is the gate's error). */
async function serve(access: any, updates: unknown[]) {
  const processing = { rate_limit: { messages_per_minute: 1, burst: 1 }, max_message_length: 20, typing_indicator: false };
  const spec = { type: 'telegram', transport: 'polling', auth: { secret_ref: 'T' }, access_control: access, processing } as any;
  const sent: any[] = [];
  let served = false;
  const fetch = async (url: string, init: any) => {
    const params = JSON.parse(init.body);
    if (url.endsWith('/getUpdates')) {
      if (!served) return (served = true), ok(updates);
      await new Promise((r) => init.signal?.addEventListener('abort', r, { once: true }));
      throw new Error('aborted');
    }
    if (url.endsWith('/sendMessage')) sent.push(params);
    return ok({ message_id: 1 });
  };
  const dir = mkdtempSync(join(tmpdir(), 'claw-tg-strangers-'));
  const ch = await openTelegramChannel({ channel: 'tg', spec, binding: { network: { mode: 'allow-all' } } as any, log: silent, dataDir: dir, secrets, clock: {} as any, fetch: fetch as any });
  let t = 0;
  const gate = ch.observe(createChannelGate('tg', spec, { now: () => 1_700_000_000_000, monotonic: () => t++, pairing: memoryPairingStorage() }));
  let handled = 0;
  ch.start((frame) => {
    handled++;
    const m = JSON.parse((frame.payload as { text: string }).text);
    const v = gate.check(m.params.from, m.params.text);
    frame.reply((v.allow ? { jsonrpc: '2.0', id: m.id, result: { reply: 'served' } } : { jsonrpc: '2.0', id: m.id, error: { code: v.code, message: v.message, data: v.data } }) as any);
  });
  const until = Date.now() + 3000;
  while (handled < updates.length && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 50));
  await ch.close();
  rmSync(dir, { recursive: true, force: true });
  return sent;
}
const msg = (id: number, from: number, text: string) => ({ update_id: id, message: { message_id: id, from: { id: from }, chat: { id: from }, text } });

test('a stranger flooding, or sending an over-long message, gets nothing on allowlist and role-based channels', async () => {
  for (const access of [{ mode: 'allowlist', allowed_ids: ['1'] }, { mode: 'role-based', roles: [{ id: '1', role: 'user' }] }]) {
    const flood = [1, 2, 3, 4].map((i) => msg(i, 9, `hello ${i}`));
    const sent = await serve(access, [...flood, msg(5, 9, 'x'.repeat(50)), msg(6, 1, 'hi')]);
    // Before: the stranger got "Channel rate limited: too many messages; try again in 60 s" three times and
    // "Invalid params: the message is longer than 20 characters": proof there is a bot, and a reply per spam message.
    assert.equal(sent.filter((p) => p.chat_id === 9).map((p) => p.text), [], access.mode);
    assert.equal(sent.filter((p) => p.chat_id === 1).map((p) => p.text), ['served'], access.mode);
  }
});

test('pairing mode keeps the rate limit before access: an unknown sender gets a code, then the rate-limit answer', async () => {
  const sent = await serve({ mode: 'pairing', pairing: { code_expiry_minutes: 10, max_pending: 5 } }, [msg(1, 9, 'hi'), msg(2, 9, 'hi')]);
  const texts = sent.filter((p) => p.chat_id === 9).map((p) => p.text as string);
  assert.is(texts.length, 2, JSON.stringify(texts));
  assert.match(texts[0], /pairing required/);
  assert.match(texts[1], /rate limited/);
});

test.run();
