// The agent as a Home Assistant device over MQTT discovery, end to end through dist/claw.mjs against a real
// mosquitto (docs/home-assistant.md). A test client plays Home Assistant: it subscribes to the discovery
// prefix, checks every config payload against the documented single-component schema, types a command into
// the text entity and reads the agent's answer on the `Last reply` sensor; availability goes `offline` by
// the MQTT Last Will when the agent is SIGKILLed and back `online` on restart; a `homeassistant/status`
// birth message makes the agent publish its configs again; a command makes the agent drive a device with
// mqtt-publish (an allowlisted topic only); `decommission: true` removes the device.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startClaw, type ClawRun } from './helpers/claw-process.ts';
import { findMosquitto, startMosquitto, type Mosquitto } from '../helpers/mosquitto.ts';
import { MqttConnection } from '../../src/transports/mqtt/connection.ts';
import { resolveMqttSettings } from '../../src/transports/mqtt/options.ts';
import { parseChannelMqttUrl } from '../../src/channels/queue-mqtt.ts';

const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent } as any;

const manifest = `claw: "0.3.0"
kind: Claw
metadata: { name: "pi-home", version: "1.4.2" }
spec:
  identity: { inline: { personality: "Looks after the house.", autonomy: "autonomous" } }
  providers:
    - inline: { name: "offline", protocol: "custom", endpoint: "file:offline-rules.yaml", model: "rules", auth: { type: "none" } }
  channels:
    - inline:
        name: "home-assistant"
        type: "custom"
        transport: "polling"
        auth: { secret_ref: "HA_UNUSED" }
        access_control: { mode: "allowlist", allowed_ids: ["home-assistant"] }
  tools:
    - inline:
        name: "mqtt-publish"
        description: "Publishes to a device topic"
        input_schema: { type: "object", properties: { topic: { type: "string" }, payload: { type: "string" } }, required: ["topic", "payload"] }
  sandbox:
    inline:
      level: "none"
      capabilities: { network: { mode: "allowlist", allowed_hosts: ["127.0.0.1"] } }
  policies:
    - inline:
        rules:
          - { id: "allow-all", action: "allow", scope: "all" }
`;
const rules = `rules:
  - match: "^(hi|hello)\\\\b"
    flags: i
    message: "Hello from the house."
  - match: "^lamp (?<state>on|off)$"
    tool_call: { tool: mqtt-publish, args: { topic: "home/lamp/set", payload: "{{state}}" } }
  - match: "^alarm off$"
    tool_call: { tool: mqtt-publish, args: { topic: "home/alarm/disarm", payload: "now" } }
default:
  message: "${'x'.repeat(300)}"
`;

// Home Assistant's MQTT docs: options each platform accepts (the subset a discovery payload may use here),
// and the ones it requires. Anything else in a payload would be rejected by Home Assistant's schema.
const COMMON = ['name', 'unique_id', 'device', 'origin', 'availability_topic', 'payload_available', 'payload_not_available', 'qos', 'icon', 'entity_category', 'object_id', 'default_entity_id', 'enabled_by_default', 'encoding'];
const SCHEMA: Record<string, { allowed: string[]; required: string[] }> = {
  text: { allowed: [...COMMON, 'command_topic', 'command_template', 'state_topic', 'value_template', 'min', 'max', 'mode', 'pattern', 'retain', 'json_attributes_topic'], required: ['command_topic'] },
  sensor: { allowed: [...COMMON, 'state_topic', 'value_template', 'json_attributes_topic', 'json_attributes_template', 'device_class', 'options', 'state_class', 'unit_of_measurement', 'expire_after', 'force_update'], required: ['state_topic'] },
};
const DEVICE_KEYS = ['identifiers', 'connections', 'name', 'manufacturer', 'model', 'model_id', 'sw_version', 'hw_version', 'serial_number', 'suggested_area', 'via_device', 'configuration_url'];
const ORIGIN_KEYS = ['name', 'sw_version', 'support_url'];
const TOPIC_ID = /^[a-zA-Z0-9_-]+$/;

function checkConfig(topic: string, raw: string): { component: string; payload: any } {
  const parts = topic.split('/');
  assert.is(parts.length, 5, `<prefix>/<component>/<node_id>/<object_id>/config: ${topic}`);
  const [prefix, component, node, object, tail] = parts;
  assert.is(prefix, 'homeassistant');
  assert.is(tail, 'config');
  assert.ok(TOPIC_ID.test(node) && TOPIC_ID.test(object), `node_id and object_id in [a-zA-Z0-9_-]: ${topic}`);
  const s = SCHEMA[component];
  assert.ok(s, `a documented component: ${component}`);
  const payload = JSON.parse(raw);
  for (const k of Object.keys(payload)) assert.ok(s.allowed.includes(k), `${component} option ${k} is documented`);
  for (const k of s.required) assert.type(payload[k], 'string', `${component} requires ${k}`);
  for (const k of ['state_topic', 'command_topic', 'availability_topic', 'json_attributes_topic']) if (k in payload) assert.not.match(payload[k], /[+#]/, `${k} has no wildcard`);
  assert.type(payload.unique_id, 'string');
  assert.ok(payload.unique_id.length > 0);
  for (const k of Object.keys(payload.device)) assert.ok(DEVICE_KEYS.includes(k), `device.${k} is documented`);
  assert.ok(Array.isArray(payload.device.identifiers) && payload.device.identifiers.length > 0, 'device.identifiers');
  for (const k of Object.keys(payload.origin)) assert.ok(ORIGIN_KEYS.includes(k), `origin.${k} is documented`);
  assert.type(payload.origin.name, 'string', 'origin.name is required');
  if (payload.device_class === 'enum') assert.ok(Array.isArray(payload.options) && payload.options.length > 0, 'an enum sensor lists its options');
  if (component === 'text') assert.ok(payload.max <= 255 && payload.min >= 0 && ['text', 'password'].includes(payload.mode));
  return { component, payload };
}

/** A client playing Home Assistant: every message seen, by topic, in order. */
async function haClient(m: Mosquitto, id: string) {
  const seen: { topic: string; text: string }[] = [];
  const conn = await MqttConnection.open({
    settings: resolveMqttSettings(parseChannelMqttUrl(m.url(), 'unused').endpoint),
    clientId: id,
    clean: true,
    log: silent,
    onMessage: (topic, payload) => seen.push({ topic, text: new TextDecoder().decode(payload) }),
  });
  await conn.ready(5000);
  await conn.subscribe('homeassistant/#');
  await conn.subscribe('claw/#');
  const last = (topic: string) => seen.filter((s) => s.topic === topic).at(-1)?.text;
  const waitFor = async (pred: () => boolean, what: string, ms = 15_000) => {
    const until = Date.now() + ms;
    while (!pred()) {
      if (Date.now() > until) throw new Error(`home assistant side: timed out waiting for ${what}; seen ${JSON.stringify(seen.slice(-12))}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  return { conn, seen, last, waitFor, configs: () => seen.filter((s) => s.topic.endsWith('/config') && s.topic.startsWith('homeassistant/')) };
}

test('home assistant device: discovery, command → reply, Last Will, birth republish, decommission', async () => {
  if (!findMosquitto()) {
    console.log('skipped: mosquitto not installed');
    return;
  }
  const broker = await startMosquitto();
  const dir = mkdtempSync(join(tmpdir(), 'claw-ha-e2e-'));
  writeFileSync(join(dir, 'claw.yaml'), manifest);
  writeFileSync(join(dir, 'offline-rules.yaml'), rules);
  const runtime = (extra = '') => writeFileSync(join(dir, 'claw.runtime.yaml'), `data_dir: ./data\nchannels:\n  home-assistant:\n    home_assistant:\n      broker: "${broker.url()}"\n      mqtt: { keepalive_s: 5 }\n${extra}mqtt_tools:\n  broker: "${broker.url()}"\n  publish: ["home/+/set"]\n`);
  runtime();
  let ha: Awaited<ReturnType<typeof haClient>> | undefined;
  let c: ClawRun | undefined;
  const start = () => startClaw(['run', 'claw.yaml', '--start'], { cwd: dir });
  try {
    const side = (ha = await haClient(broker, 'ha-side'));
    c = start();
    await side.waitFor(() => side.configs().length >= 3 && side.last('claw/pi-home/lifecycle') === 'READY', 'discovery and READY');
    const configs = side.configs().map((s) => ({ topic: s.topic, ...checkConfig(s.topic, s.text) }));
    assert.equal(configs.map((x) => x.topic).sort(), ['homeassistant/sensor/pi-home/last_reply/config', 'homeassistant/sensor/pi-home/lifecycle/config', 'homeassistant/text/pi-home/command/config']);
    // One device (same identifiers) with the manifest's name and version; availability tied to one topic.
    const devices = new Set(configs.map((x) => JSON.stringify(x.payload.device)));
    assert.is(devices.size, 1);
    const device = configs[0].payload.device;
    assert.equal([device.name, device.sw_version, device.model], ['pi-home', '1.4.2', 'CKP 0.3.0 agent']);
    assert.ok(configs.every((x) => x.payload.availability_topic === 'claw/pi-home/availability'));
    assert.is(side.last('claw/pi-home/availability'), 'online');
    const text = configs.find((x) => x.component === 'text')!.payload;
    const reply = configs.find((x) => x.topic.includes('last_reply'))!.payload;
    const lifecycle = configs.find((x) => x.topic.includes('lifecycle'))!.payload;
    assert.equal(lifecycle.options, ['INIT', 'STARTING', 'READY', 'STOPPING', 'STOPPED', 'ERROR']);

    // A command typed into the text entity is a turn; the reply is the sensor's state (and attributes).
    await side.conn.publish(text.command_topic, 'hello');
    await side.waitFor(() => side.last(reply.state_topic) === 'Hello from the house.', 'reply on the sensor');
    const attrs = JSON.parse(side.last(reply.json_attributes_topic)!);
    assert.equal([attrs.reply, attrs.outcome, attrs.command], ['Hello from the house.', 'message', 'hello']);
    // A reply longer than a sensor state may be (255) is cut for the state, whole in the attributes.
    await side.conn.publish(text.command_topic, 'something else');
    await side.waitFor(() => (side.last(reply.state_topic) ?? '').startsWith('xxx'), 'long reply');
    assert.is([...side.last(reply.state_topic)!].length, 255);
    assert.is(JSON.parse(side.last(reply.json_attributes_topic)!).reply.length, 300);

    // The agent's hands: a command that makes the agent publish to a device topic (mqtt-publish, allowlisted),
    // and one whose topic is outside the allowlist (refused by the sandbox, nothing published).
    await side.conn.subscribe('home/#');
    await side.conn.publish(text.command_topic, 'lamp on');
    await side.waitFor(() => side.last('home/lamp/set') === 'on', 'the lamp command on the broker');
    await side.waitFor(() => JSON.parse(side.last(reply.json_attributes_topic)!).command === 'lamp on', 'lamp turn answered');
    assert.is(JSON.parse(side.last(reply.json_attributes_topic)!).tool_calls, 1);
    await side.conn.publish(text.command_topic, 'alarm off');
    await side.waitFor(() => JSON.parse(side.last(reply.json_attributes_topic)!).command === 'alarm off', 'alarm turn answered');
    assert.is(side.last('home/alarm/disarm'), undefined, 'a topic outside mqtt_tools.publish is never published');

    // Home Assistant restarts and announces itself: every config is published again.
    const before = side.configs().length;
    await side.conn.publish('homeassistant/status', 'online');
    await side.waitFor(() => side.configs().length >= before + 3, 'republished configs');

    // SIGKILL: the broker publishes the Last Will (offline, retained); a restart brings it back online.
    c.child.kill('SIGKILL');
    await c.exited;
    await side.waitFor(() => side.last('claw/pi-home/availability') === 'offline', 'Last Will offline');
    const late = await haClient(broker, 'ha-late');
    await late.waitFor(() => late.last('claw/pi-home/availability') === 'offline', 'offline is retained');
    await late.waitFor(() => late.configs().length === 3, 'retained configs for a late subscriber');
    await late.conn.close();
    c = start();
    await side.waitFor(() => side.last('claw/pi-home/availability') === 'online' && side.last('claw/pi-home/lifecycle') === 'READY', 'online again');

    // A clean stop says offline itself (no Last Will on a clean disconnect).
    c.child.kill('SIGTERM');
    assert.is((await c.exited).code, 0, c.stderr().slice(-1500));
    await side.waitFor(() => side.last('claw/pi-home/availability') === 'offline', 'offline on SIGTERM');

    // Decommissioned: empty retained configs remove the device; a new subscriber finds nothing.
    runtime('      decommission: true\n');
    c = start();
    await side.waitFor(() => side.seen.filter((s) => s.topic.endsWith('/config') && s.text === '').length === 3, 'empty configs');
    const after = await haClient(broker, 'ha-after');
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(after.configs(), [], 'no retained discovery config is left');
    assert.is(after.last('claw/pi-home/availability'), undefined);
    await after.conn.close();
  } catch (e) {
    throw new Error(`${(e as Error).message}\nagent stderr: ${c?.stderr().slice(-2000)}`);
  } finally {
    if (c && c.child.exitCode === null) {
      c.child.kill('SIGTERM');
      await c.exited;
    }
    await ha?.conn.close();
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
    rmSync(broker.dir, { recursive: true, force: true });
  }
});

test.run();
