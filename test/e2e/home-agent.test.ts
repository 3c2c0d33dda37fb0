// examples/home-agent end to end through dist/claw.mjs, with every outside party faked on loopback: Ollama
// (test/helpers/sim-llm-server.ts), the Telegram Bot API (fake-telegram.ts), Home Assistant's MCP server
// (fake-ha-mcp.ts) and its MQTT broker (a real mosquitto). The example's own files are used; a copy only has
// the addresses swapped for the fakes' (each swap asserted, so an edit of the example that loses one fails
// here). One real turn: a family member pairs on Telegram, asks to open the garage, the model calls
// ha-turn-on, the asker approves with the inline button, Home Assistant opens the cover, the reply arrives.
// Also: the Home Assistant device channel with a read that needs no approval, mqtt-publish to a Zigbee2MQTT
// topic (approved), and the offline fallback.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, runClaw, startClaw, type ClawRun } from './helpers/claw-process.ts';
import { findMosquitto, startMosquitto } from '../helpers/mosquitto.ts';
import { startFakeTelegram } from '../helpers/fake-telegram.ts';
import { startFakeHaMcp } from '../helpers/fake-ha-mcp.ts';
import { startSimLlm } from '../helpers/sim-llm-server.ts';
import { MqttConnection } from '../../src/transports/mqtt/connection.ts';
import { resolveMqttSettings } from '../../src/transports/mqtt/options.ts';
import { parseChannelMqttUrl } from '../../src/channels/queue-mqtt.ts';

const EXAMPLE = join(ROOT, 'examples', 'home-agent');
const BOT = '777001:home-agent-bot-token';
const HA_TOKEN = 'ha-llat-home-agent-8d02c6f1';
const FAMILY = 4242;
const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent } as any;

/** Replace `from` by `to` in one of the copy's files; the example must still contain `from`. */
function swap(dir: string, file: string, from: string, to: string): void {
  const p = join(dir, file);
  const text = readFileSync(p, 'utf8');
  assert.ok(text.includes(from), `examples/home-agent/${file} no longer has ${from}`);
  writeFileSync(p, text.replaceAll(from, to));
}

const wait = async (pred: () => boolean, what: string, ms = 15_000) => {
  const until = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
};

test('the example validates as it is, --strict, against its own claw.runtime.yaml', async () => {
  const r = await runClaw(['validate', join(EXAMPLE, 'claw.yaml'), '--strict', '--json']);
  assert.is(r.code, 0, r.stdout + r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal([out.valid, out.issues, out.warnings], [true, [], []]);
});

test('home agent: Telegram pairing → turn → HassTurnOn approved by button → Home Assistant acts → reply', async () => {
  if (!findMosquitto()) {
    console.log('skipped: mosquitto not installed');
    return;
  }
  const broker = await startMosquitto();
  const tg = await startFakeTelegram();
  const ha = await startFakeHaMcp({ token: HA_TOKEN });
  const sim = await startSimLlm({
    models: ['qwen2.5:1.5b'],
    intents: [
      { when: 'garage door', tool: 'ha-turn-on', args: { name: 'Garage door' }, reply: 'The garage door is open.' },
      { when: 'temperature', tool: 'ha-live-context', args: {}, reply: 'It is 19.5 °C in the hall.' },
      { when: 'desk plug', tool: 'mqtt-publish', args: { topic: 'zigbee2mqtt/desk_plug/set', payload: '{"state":"ON"}' }, reply: 'The desk plug is on.' },
    ],
    fallbackReply: 'Hello from the model.',
  });
  const dir = mkdtempSync(join(tmpdir(), 'claw-home-agent-'));
  const secrets = mkdtempSync(join(tmpdir(), 'claw-home-secrets-'));
  let c: ClawRun | undefined;
  let side: MqttConnection | undefined;
  try {
    cpSync(EXAMPLE, dir, { recursive: true, filter: (src) => !src.includes('.claw-data') });
    swap(dir, 'providers/10-ollama.yaml', 'http://127.0.0.1:11434/v1', `${sim.url}/v1`);
    for (const t of ['ha-live-context', 'ha-turn-on', 'ha-turn-off']) swap(dir, `tools/${t}.yaml`, 'https://homeassistant.local:8123/api/mcp', ha.url);
    swap(dir, 'sandbox.yaml', 'allowed_hosts: ["homeassistant.local"]', 'allowed_hosts: ["127.0.0.1"]');
    swap(dir, 'claw.runtime.yaml', 'mqtt://homeassistant.local:1883', broker.url());
    swap(dir, 'claw.runtime.yaml', '"https://homeassistant.local:8123/api/mcp": { bearer_secret_ref: HA_TOKEN }', `"${ha.url}": { allow_loopback: true, bearer_secret_ref: HA_TOKEN }`);
    swap(dir, 'claw.runtime.yaml', 'telegram: {}', `telegram: { api_url: "${tg.url}", poll_timeout_s: 1, retry: { initial_delay_ms: 50, max_delay_ms: 400 }, network: { mode: "allowlist", allowed_hosts: ["127.0.0.1"], ssrf_protection: { enabled: false } } }`);
    writeFileSync(join(secrets, 'TELEGRAM_BOT_TOKEN'), BOT);
    writeFileSync(join(secrets, 'HA_TOKEN'), HA_TOKEN);
    writeFileSync(join(secrets, 'HA_MQTT_PASSWORD'), 'mqtt-pass');
    const env = { CLAW_SECRETS_DIR: secrets };

    // Home Assistant's side of the broker: the device's availability and replies.
    const seen: { topic: string; text: string }[] = [];
    side = await MqttConnection.open({
      settings: resolveMqttSettings(parseChannelMqttUrl(broker.url(), 'unused').endpoint),
      clientId: 'ha-side',
      clean: true,
      log: silent,
      onMessage: (topic, payload) => seen.push({ topic, text: new TextDecoder().decode(payload) }),
    });
    await side.ready(5000);
    await side.subscribe('claw/#');
    const last = (topic: string) => seen.filter((s) => s.topic === topic).at(-1)?.text;

    c = startClaw(['run', 'claw.yaml', '--start'], { cwd: dir, env });
    await tg.waitFor((calls) => calls.some((x) => x.method === 'getUpdates'), 20_000, `polling; stderr ${c.stderr().slice(-2000)}`);
    await wait(() => last('claw/pi-home/availability') === 'online', 'the device online in Home Assistant');

    // A family member is not known yet: a pairing code, approved on the Pi with `claw pair`.
    tg.message(BOT, FAMILY, 'hello');
    await tg.waitFor(() => tg.sent(BOT, FAMILY).length === 1, 15_000, 'pairing instruction');
    const code = /approve code ([A-Z0-9-]+)/.exec(tg.sent(BOT, FAMILY)[0]!.params.text)?.[1];
    assert.ok(code, tg.sent(BOT, FAMILY)[0]!.params.text);
    const paired = await runClaw(['pair', 'claw.yaml', code!, '--channel', 'family-bot'], { cwd: dir, env });
    assert.is(paired.code, 0, paired.stderr);

    // The turn: the model calls ha-turn-on; the asker is asked; nothing reaches Home Assistant before the press.
    tg.message(BOT, FAMILY, 'Please open the garage door');
    await tg.waitFor(() => tg.sent(BOT, FAMILY).some((x) => x.params.reply_markup), 20_000, `approval question; stderr ${c.stderr().slice(-1500)}`);
    const ask = tg.sent(BOT, FAMILY).find((x) => x.params.reply_markup)!;
    assert.match(ask.params.text, /^Approval needed: tool ha-turn-on \{"name":"Garage door"\} \(acts on the house\)$/);
    assert.is(ha.calls.length, 0);
    assert.is(ha.state('cover.garage_door'), 'closed');
    const [[approve]] = ask.params.reply_markup.inline_keyboard;
    tg.press(BOT, FAMILY, approve.callback_data, { chat_id: FAMILY, message_id: 0 });
    await tg.waitFor(() => tg.sent(BOT, FAMILY).some((x) => x.params.text === 'The garage door is open.'), 20_000, `reply; stderr ${c.stderr().slice(-1500)}`);
    assert.is(ha.state('cover.garage_door'), 'open');
    assert.equal(ha.calls.map((x) => [x.tool, x.args]), [['HassTurnOn', { name: 'Garage door' }]]);
    assert.ok(ha.requests.every((r) => r.authorization === `Bearer ${HA_TOKEN}`));
    assert.is(tg.sent(BOT, FAMILY).filter((x) => x.params.reply_markup).length, 1, 'asked once (autonomy and policy agree)');
    // The model was Ollama (the sim), offered the example's tools natively.
    const chat = sim.requests.find((r) => r.path === '/v1/chat/completions');
    assert.equal(chat?.body.tools.map((t: any) => t.function.name).sort(), ['ha-live-context', 'ha-turn-off', 'ha-turn-on', 'mqtt-publish']);

    // From Home Assistant's own UI (the device's Command text): a read, which needs no approval.
    await side.publish('claw/pi-home/command', 'What is the temperature in the hall?');
    await wait(() => last('claw/pi-home/reply') === 'It is 19.5 °C in the hall.', 'reply on the Last reply sensor');
    assert.is(ha.calls.at(-1)!.tool, 'GetLiveContext');
    assert.is(tg.sent(BOT, FAMILY).filter((x) => x.params.reply_markup).length, 1, 'no approval for a read');

    // A Zigbee2MQTT device Home Assistant does not expose: mqtt-publish on an allowed topic, approved too.
    await side.subscribe('zigbee2mqtt/#');
    tg.message(BOT, FAMILY, 'Switch the desk plug on');
    await tg.waitFor(() => tg.sent(BOT, FAMILY).filter((x) => x.params.reply_markup).length === 2, 20_000, 'second approval question');
    const ask2 = tg.sent(BOT, FAMILY).filter((x) => x.params.reply_markup)[1]!;
    assert.match(ask2.params.text, /^Approval needed: tool mqtt-publish /);
    assert.is(seen.find((s) => s.topic === 'zigbee2mqtt/desk_plug/set'), undefined);
    tg.press(BOT, FAMILY, ask2.params.reply_markup.inline_keyboard[0][0].callback_data, { chat_id: FAMILY, message_id: 0 });
    await tg.waitFor(() => tg.sent(BOT, FAMILY).some((x) => x.params.text === 'The desk plug is on.'), 20_000, 'plug reply');
    await wait(() => last('zigbee2mqtt/desk_plug/set') === '{"state":"ON"}', 'the plug command on the broker');

    // Ollama gone: the offline rules answer.
    await sim.close();
    tg.message(BOT, FAMILY, 'hello');
    await tg.waitFor(() => tg.sent(BOT, FAMILY).some((x) => /^Hello! My language model is not reachable/.test(x.params.text)), 20_000, 'offline answer');

    // The conversation went to the SQLite memory (sql.js: a journal until the first snapshot).
    const journal = join(dir, '.claw-data', 'memory', 'home-memory.db.claw-journal');
    assert.ok(existsSync(journal) && statSync(journal).size > 0, 'the conversation is kept in SQLite');
    const logs = c.stderr();
    for (const s of [BOT, HA_TOKEN]) assert.not.ok(logs.includes(s), 'no secret in the log');
    c.child.kill('SIGTERM');
    const exit = await c.exited;
    assert.is(exit.code, 0, logs.slice(-1500));
    assert.is(last('claw/pi-home/availability'), 'offline');
  } finally {
    if (c && c.child.exitCode === null && c.child.signalCode === null) {
      c.child.kill('SIGKILL');
      await c.exited;
    }
    await side?.close();
    await sim.close().catch(() => {});
    await ha.close();
    await tg.close();
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
    rmSync(secrets, { recursive: true, force: true });
    rmSync(broker.dir, { recursive: true, force: true });
  }
});

test.run();
