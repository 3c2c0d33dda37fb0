// The Telegram channel end to end through dist/claw.mjs (docs/channels.md "Telegram"), against a fake Bot
// API server on loopback (test/helpers/fake-telegram.ts) and the offline rules provider: message → turn →
// reply (typing first, long replies split), a stranger gets nothing, pairing with `claw pair`, an approval
// through inline buttons (only an admin's press counts), 429 / dropped connections survived, and a
// SIGKILL + restart that neither loses nor replays a message although the server serves old updates again.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runClaw, startClaw, type ClawRun } from './helpers/claw-process.ts';
import { startFakeTelegram, type FakeTelegram, type RecordedCall } from '../helpers/fake-telegram.ts';

const HOME = '123456:home-bot-token-for-tests';
const PAIR = '654321:pairing-bot-token-for-tests';
const ADMIN = 100;
const USER = 200;
const STRANGER = 999;
const NEWCOMER = 300;
const LONG = 'word '.repeat(1100).trim(); // 5499 characters: two messages

const manifest = `claw: "0.3.0"
kind: Claw
metadata: { name: "tg-agent", version: "1.0.0" }
spec:
  identity: { inline: { personality: "A home bot.", autonomy: "autonomous" } }
  providers:
    - inline: { name: "offline", protocol: "custom", endpoint: "file:offline-rules.yaml", model: "rules", auth: { type: "none" } }
  channels:
    - inline:
        name: "tg-home"
        type: "telegram"
        transport: "polling"
        auth: { secret_ref: "TG_HOME" }
        access_control:
          mode: "role-based"
          roles: [{ id: "${ADMIN}", role: "admin" }, { id: "${USER}", role: "user" }]
        trigger: { max_parallel: 1, overlap_policy: "queue" }
    - inline:
        name: "tg-pair"
        type: "telegram"
        transport: "polling"
        auth: { secret_ref: "TG_PAIR" }
        access_control: { mode: "pairing", pairing: { code_expiry_minutes: 30, max_pending: 5 } }
  tools:
    - inline:
        name: "echo"
        description: "Repeats a text"
        input_schema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] }
  sandbox: { inline: { level: "process" } }
  policies:
    - inline:
        rules:
          - { id: "ask-first", action: "require-approval", scope: "all", reason: "every tool is asked" }
`;
const rules = `rules:
  - match: "^(hi|hello)\\\\b"
    flags: i
    message: "Hello from the bot."
  - match: "^long$"
    message: "${LONG}"
  - match: "^echo (?<what>.+)$"
    tool_call: { tool: echo, args: { text: "{{what}}" } }
default:
  message: "Offline."
after_tool:
  message: "Echoed: {{result}}"
`;

function agentDir(api: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'claw-telegram-e2e-'));
  writeFileSync(join(dir, 'claw.yaml'), manifest);
  writeFileSync(join(dir, 'offline-rules.yaml'), rules);
  const tg = `telegram: { api_url: "${api}", poll_timeout_s: 1, retry: { initial_delay_ms: 50, max_delay_ms: 400 }, network: { mode: "allowlist", allowed_hosts: ["127.0.0.1"], ssrf_protection: { enabled: false } } }`;
  writeFileSync(join(dir, 'claw.runtime.yaml'), `data_dir: ./data\nchannels:\n  tg-home:\n    ${tg}\n  tg-pair:\n    ${tg}\n`);
  return dir;
}

const env = { TG_HOME: HOME, TG_PAIR: PAIR };
const texts = (c: RecordedCall[]) => c.map((x) => x.params.text as string);
const polledPast = (fake: FakeTelegram, token: string, updateId: number) => (calls: RecordedCall[]) =>
  calls.some((c) => c.token === token && c.method === 'getUpdates' && c.params.offset > updateId);

async function started(fake: FakeTelegram, dir: string): Promise<ClawRun> {
  const c = startClaw(['run', 'claw.yaml', '--start'], { cwd: dir, env });
  await fake.waitFor((calls) => [HOME, PAIR].every((t) => calls.some((x) => x.token === t && x.method === 'getUpdates')), 15_000, `both bots polling; stderr ${c.stderr().slice(-2000)}`);
  return c;
}

test('telegram: turns, strangers, pairing, approvals by inline button, 429 and drops, restart without loss or replay', async () => {
  const fake = await startFakeTelegram();
  const dir = agentDir(fake.url);
  let c: ClawRun | undefined;
  try {
    c = await started(fake, dir);

    // A stranger on a role-based channel: nothing at all comes back, and no turn runs.
    const s = fake.message(HOME, STRANGER, 'hello');
    await fake.waitFor(polledPast(fake, HOME, s), 10_000, 'stranger update confirmed');
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(fake.calls.filter((x) => x.params.chat_id === STRANGER), [], 'the stranger gets no message and no typing');

    // A user: typing while the turn runs, then the reply.
    fake.message(HOME, USER, 'hello');
    await fake.waitFor(() => texts(fake.sent(HOME, USER)).includes('Hello from the bot.'), 10_000, 'reply to the user');
    const first = fake.calls.findIndex((x) => x.method === 'sendChatAction' && x.params.chat_id === USER);
    const reply = fake.calls.findIndex((x) => x.method === 'sendMessage' && x.params.chat_id === USER);
    assert.ok(first >= 0 && first < reply, 'typing before the reply');
    assert.is(fake.calls[first].params.action, 'typing');

    // A long reply is split under Telegram's 4096-character limit, in order, losing nothing but the cut spaces.
    fake.message(HOME, USER, 'long');
    await fake.waitFor(() => fake.sent(HOME, USER).length >= 3, 10_000, 'long reply');
    const parts = texts(fake.sent(HOME, USER)).slice(1);
    assert.is(parts.length, 2);
    assert.ok(parts.every((p) => p.length <= 4096));
    assert.is(parts.join(' '), LONG);

    // Approval: the admin is asked with inline buttons; the user's own press does not count, the admin's does.
    fake.message(HOME, USER, 'echo ping');
    await fake.waitFor(() => fake.sent(HOME, ADMIN).length === 1, 10_000, 'approval question to the admin');
    const ask = fake.sent(HOME, ADMIN)[0];
    assert.match(ask.params.text, /^Approval needed: tool echo \{"text":"ping"\} \(every tool is asked\)$/);
    const [[approve, deny]] = ask.params.reply_markup.inline_keyboard;
    assert.equal([approve.text, deny.text], ['Approve', 'Deny']);
    const askedMsg = { chat_id: ADMIN, message_id: 0 };
    fake.press(HOME, USER, approve.callback_data, askedMsg);
    await fake.waitFor((calls) => calls.some((x) => x.method === 'answerCallbackQuery' && x.params.text === 'You may not decide this approval.'), 10_000, 'user press refused');
    assert.not.ok(texts(fake.sent(HOME, USER)).includes('Echoed: ping'));
    fake.press(HOME, ADMIN, approve.callback_data, askedMsg);
    await fake.waitFor(() => texts(fake.sent(HOME, USER)).includes('Echoed: ping'), 10_000, 'approved tool result');
    assert.ok(fake.calls.some((x) => x.method === 'editMessageText' && x.params.text === 'Approved: tool echo runs.'));

    // Pairing: the newcomer gets only the pairing instruction; `claw pair` approves; then they are served.
    fake.message(PAIR, NEWCOMER, 'hello');
    await fake.waitFor(() => fake.sent(PAIR, NEWCOMER).length === 1, 10_000, 'pairing instruction');
    const instruction = fake.sent(PAIR, NEWCOMER)[0].params.text as string;
    const code = /approve code ([A-Z0-9-]+)/.exec(instruction)?.[1];
    assert.ok(code, instruction);
    const paired = await runClaw(['pair', 'claw.yaml', code!, '--channel', 'tg-pair'], { cwd: dir, env });
    assert.is(paired.code, 0, paired.stderr);
    fake.message(PAIR, NEWCOMER, 'hello');
    await fake.waitFor(() => texts(fake.sent(PAIR, NEWCOMER)).includes('Hello from the bot.'), 10_000, 'paired reply');

    // A flaky link: a dropped getUpdates and a 429 on sendMessage (retry_after 1 s); the message is answered once.
    fake.fail(HOME, 'getUpdates', { kind: 'drop' });
    fake.fail(HOME, 'getUpdates', { kind: '500' });
    fake.fail(HOME, 'sendMessage', { kind: '429', retryAfter: 1 });
    const before = fake.sent(HOME, USER).length;
    fake.message(HOME, USER, 'hi there');
    // The fake records the refused attempt too: two sendMessage calls with the same text.
    await fake.waitFor(() => fake.sent(HOME, USER).length === before + 2, 15_000, 'reply after 429');
    const attempts = fake.sent(HOME, USER).slice(before);
    assert.is(attempts.length, 2, 'one 429 refusal, one delivery');
    assert.ok(attempts[1].at - attempts[0].at >= 950, `waited retry_after: ${attempts[1].at - attempts[0].at} ms`);

    // A turn cut off by SIGKILL while it waits for approval; then the server forgets every confirmation and
    // serves all old updates again, plus a new message.
    fake.message(HOME, USER, 'echo lost');
    await fake.waitFor(() => fake.sent(HOME, ADMIN).length === 2, 10_000, 'second approval question');
    const sentBefore = fake.sent(HOME, USER).length;
    c.child.kill('SIGKILL');
    await c.exited;
    fake.forget(HOME, 0);
    fake.message(HOME, USER, 'hello again');
    c = await started(fake, dir);
    await fake.waitFor(() => fake.sent(HOME, USER).length >= sentBefore + 2, 10_000, 'replies after restart');
    await new Promise((r) => setTimeout(r, 800));
    // The cut-off message is answered "interrupted" (not run again, not silently lost); the new one normally;
    // nothing else is replayed, and the admin is not asked again.
    assert.equal(texts(fake.sent(HOME, USER).slice(sentBefore)).sort(), ['Hello from the bot.', 'The agent restarted before answering your message, and did not finish it. Please send it again.']);
    assert.is(fake.sent(HOME, ADMIN).length, 2);
    assert.equal(fake.calls.filter((x) => x.params.chat_id === STRANGER), []);
  } finally {
    if (c) {
      c.child.kill('SIGTERM');
      await c.exited;
    }
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
