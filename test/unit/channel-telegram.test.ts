// Telegram channel pieces without a server: the network guard decides the API host at STARTING, the token
// never appears in an error, long replies are split at boundaries, and the state journal's exactly-once rules.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTelegramChannel } from '../../src/channels/telegram/channel.ts';
import { telegramApi, TelegramError } from '../../src/channels/telegram/api.ts';
import { splitMessage } from '../../src/channels/telegram/split.ts';
import { fileTelegramState } from '../../src/channels/telegram/state.ts';

const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent } as any;
const spec = { type: 'telegram', transport: 'polling', auth: { secret_ref: 'TOKEN' } } as any;
const secrets = { resolve: async () => '123:secret-token-value' } as any;
const clock = {} as any;

test('the API host must be allowed by the network settings, or STARTING fails naming it', async () => {
  const cases: [any, RegExp][] = [
    [{ api_url: 'https://evil.example' , network: { mode: 'allowlist', allowed_hosts: ['api.telegram.org'] } }, /Telegram API host evil\.example is not allowed/],
    [{ network: { mode: 'deny' } }, /Telegram API host api\.telegram\.org is not allowed/],
  ];
  for (const [binding, msg] of cases) {
    let err: unknown;
    await openTelegramChannel({ channel: 'tg', spec, binding, log: silent, dataDir: '/nonexistent', secrets, clock }).catch((e) => (err = e));
    assert.match(String(err), msg);
  }
});

test('the bot token never appears in an error message', async () => {
  const token = '123:secret-token-value';
  const api = telegramApi({ apiUrl: 'http://127.0.0.1:1', token, network: { mode: 'allow-all' }, fetch: async (url) => { throw new Error(`connect ECONNREFUSED ${url}`); } });
  const e = await api.call<any>('getMe', {}).catch((x: any) => x as any);
  assert.instance(e, TelegramError);
  assert.is(e.failure.kind, 'network');
  assert.not.ok(e.message.includes(token), e.message);
  const flood = telegramApi({ apiUrl: 'http://x', token, network: { mode: 'allow-all' }, fetch: async () => ({ status: 429, headers: {}, body: JSON.stringify({ ok: false, error_code: 429, description: 'Too Many Requests', parameters: { retry_after: 7 } }), truncated: false }) as any });
  const f = await flood.call<any>('sendMessage', {}).catch((x: any) => x as any);
  assert.equal([f.failure.kind, f.failure.retryAfterMs], ['flood', 7000]);
  // A proxy's JSON error echoing the request path, URL-encoded (before: the secret part leaked, `:` being %3A).
  const path = `/bot${token}/getUpdates`;
  const echoed = telegramApi({ apiUrl: 'http://x', token, network: { mode: 'allow-all' }, fetch: async () => ({ status: 500, headers: {}, body: JSON.stringify({ ok: false, error_code: 500, description: `no route ${encodeURIComponent(path)} ${encodeURIComponent(path).toLowerCase()}` }), truncated: false }) as any });
  const x = await echoed.call<any>('getUpdates', {}).catch((e: any) => e as any);
  assert.is(x.failure.kind, 'network');
  assert.not.ok(x.message.includes('secret-token-value'), x.message);
  // A description cut at 300 characters with the token across the cut (before: its first 20 characters stayed).
  const straddle = telegramApi({ apiUrl: 'http://x', token, network: { mode: 'allow-all' }, fetch: async () => ({ status: 400, headers: {}, body: JSON.stringify({ ok: false, error_code: 400, description: `${'x'.repeat(280)}${token}` }), truncated: false }) as any });
  const cut = await straddle.call<any>('getMe', {}).catch((e: any) => e as any);
  assert.not.ok(cut.message.includes(token.slice(0, 12)), cut.message);
  const refused = telegramApi({ apiUrl: 'http://x', token, network: { mode: 'allow-all' }, fetch: async () => ({ status: 401, headers: {}, body: JSON.stringify({ ok: false, error_code: 401, description: 'Unauthorized' }), truncated: false }) as any });
  assert.equal(((await refused.call("getMe", {}).catch((x: any) => x)) as any).failure, { kind: 'api', code: 401, message: 'getMe: Unauthorized' });
});

test('retry_after: at least 1 s, at most an hour, 5 s when it is not a number of seconds', async () => {
  // Before: retry_after 0 (or 0.001) was waited as 0 ms: a server answering so polled getUpdates ~750 times a second.
  const cases: [unknown, number][] = [[0, 1000], [0.001, 1000], [2, 2000], [1e9, 3_600_000], [-3, 5000], ['7', 5000], [null, 5000]];
  for (const [retry_after, ms] of cases) {
    const api = telegramApi({ apiUrl: 'http://x', token: '1:t', network: { mode: 'allow-all' }, fetch: async () => ({ status: 429, headers: {}, body: JSON.stringify({ ok: false, error_code: 429, description: 'Too Many Requests', parameters: { retry_after } }), truncated: false }) as any });
    const e = await api.call<any>('getUpdates', {}).catch((x: any) => x as any);
    assert.equal([e.failure.kind, e.failure.retryAfterMs], ['flood', ms], JSON.stringify(retry_after));
  }
});

test('splitMessage: at most 4096 per piece, cut at a paragraph, line or word; surrogate pairs kept whole', () => {
  assert.equal(splitMessage('short'), ['short']);
  const paras = `${'a'.repeat(3000)}\n\n${'b'.repeat(3000)}`;
  assert.equal(splitMessage(paras), ['a'.repeat(3000), 'b'.repeat(3000)]);
  const words = 'word '.repeat(2000).trim();
  const parts = splitMessage(words);
  assert.ok(parts.every((p) => p.length <= 4096 && !p.startsWith(' ') && !p.endsWith(' ')));
  assert.is(parts.join(' '), words);
  const emoji = '😀'.repeat(3000); // 6000 UTF-16 units, no boundary
  const e = splitMessage(emoji);
  assert.ok(e.every((p) => p.length <= 4096 && !/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/.test(p)));
  assert.is(e.join(''), emoji);
});

test('state: the offset survives a restart; a journaled message without an answer is interrupted', () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-tg-state-'));
  try {
    const a = fileTelegramState(dir);
    assert.is(a.offset(), 0);
    a.accept([{ update_id: 7, chat_id: 1, message_id: 70 }]);
    a.advance(8);
    a.accept([{ update_id: 8, chat_id: 2, message_id: 80 }]);
    a.advance(9);
    a.answered(8);
    a.advance(5); // never backwards
    const b = fileTelegramState(dir);
    assert.is(b.offset(), 9);
    assert.equal(b.interrupted(), [{ update_id: 7, chat_id: 1, message_id: 70 }]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});



test('state: the highest update id there is (2^53 - 1) confirmed: the offset past it (2^53) survives a restart, and its unanswered message is still "interrupted"', () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-tg-state-'));
  try {
    const top = Number.MAX_SAFE_INTEGER;
    const a = fileTelegramState(dir);
    a.accept([{ update_id: top, chat_id: 1, message_id: 70 }]);
    a.advance(top + 1);
    const b = fileTelegramState(dir);
    assert.is(b.offset(), top + 1);
    assert.equal(b.interrupted(), [{ update_id: top, chat_id: 1, message_id: 70 }]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('state: a batch whose first update id is that of a batch still in flight (ids started over) gets its own file; each answer removes one message', () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-tg-state-'));
  try {
    const a = fileTelegramState(dir);
    a.accept([{ update_id: 5, chat_id: 1, message_id: 50 }, { update_id: 6, chat_id: 1, message_id: 60 }]);
    a.advance(7);
    a.restart(5);
    a.accept([{ update_id: 5, chat_id: 2, message_id: 500 }]);
    a.advance(6);
    // A crash now: all three are unanswered.
    const byMessage = (l: { message_id: number }[]) => l.map((p) => p.message_id).sort((x, y) => x - y);
    assert.equal(byMessage(fileTelegramState(dir).interrupted()), [50, 60, 500]);
    // Update 5 answered once (the older message), then the crash: the newer 5 and 6 are still journaled.
    a.answered(5);
    assert.equal(byMessage(fileTelegramState(dir).interrupted()), [60, 500]);
    a.answered(5);
    a.answered(6);
    assert.equal(fileTelegramState(dir).interrupted(), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a retry delay longer than a timer holds (initial_delay_ms 3e9) waits, not 1 ms: a failing getUpdates is not hammered', async () => {
  // Node fires a timer over 2^31 - 1 ms after 1 ms: the poll loop retried at once, hundreds of times a second.
  let polls = 0;
  const fetch = async () => (polls++, { status: 502, headers: {}, body: 'Bad Gateway', truncated: false }) as any;
  const dir = mkdtempSync(join(tmpdir(), 'claw-tg-delay-'));
  const ch = await openTelegramChannel({ channel: 'tg', spec, binding: { network: { mode: 'allow-all' }, retry: { initial_delay_ms: 3e9 } } as any, log: silent, dataDir: dir, secrets, clock, fetch });
  try {
    ch.start(() => {});
    await new Promise((r) => setTimeout(r, 150));
    assert.is(polls, 1);
  } finally {
    await ch.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
