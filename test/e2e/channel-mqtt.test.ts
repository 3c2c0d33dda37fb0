// A queue channel bound to an MQTT topic, end to end through dist/claw.mjs (docs/channels.md "MQTT
// topic"): examples/queue-agent (offline rules, no network) started with `claw run --start`, its channel
// bound to a real broker (aedes, in this process) in claw.runtime.yaml. A peer publishes channel.message
// requests in the MQTT 3.1.1 envelope: an allowed sender's turn runs the same agent loop (a message, and a
// tool call through the gates), an unknown sender is refused by access_control (-32050), nothing runs.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server, type Socket } from 'node:net';
import { Aedes } from 'aedes';
import { MqttConnection } from '../../src/transports/mqtt/connection.ts';
import { resolveMqttSettings } from '../../src/transports/mqtt/options.ts';
import { parseChannelMqttUrl } from '../../src/channels/queue-mqtt.ts';
import { ROOT, startClaw } from './helpers/claw-process.ts';

const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent } as any;

test('mqtt queue channel: allowlisted sender gets message and tool-call turns, an unknown sender -32050; audit records the tool call', async () => {
  const broker = await Aedes.createBroker();
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    broker.handle(s);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  const dir = mkdtempSync(join(tmpdir(), 'claw-mqtt-channel-'));
  const ex = join(ROOT, 'examples', 'queue-agent');
  const manifest = readFileSync(join(ex, 'claw.yaml'), 'utf8').replace(
    /mode: "pairing"\n\s+pairing: \{[^}]*\}/,
    'mode: "allowlist"\n          allowed_ids: ["alice"]',
  );
  assert.ok(manifest.includes('allowed_ids: ["alice"]'), 'the example still has the pairing block this test rewrites');
  writeFileSync(join(dir, 'claw.yaml'), manifest);
  copyFileSync(join(ex, 'offline-rules.yaml'), join(dir, 'offline-rules.yaml'));
  const url = `mqtt://127.0.0.1:${port}?protocol=3.1.1`;
  writeFileSync(join(dir, 'claw.runtime.yaml'), `data_dir: ./data\nchannels:\n  team-queue:\n    listen: "${url}"\n`);

  const c = startClaw(['run', 'claw.yaml', '--start'], { cwd: dir });
  let peer: MqttConnection | undefined;
  const got: { topic: string; body: any }[] = [];
  try {
    // --start: the session is STARTING (the channel connects to the broker) until READY.
    for (let i = 0; ; i++) {
      const st = await c.request('claw.status', {}, `s${i}`);
      if (st.result?.state === 'READY') break;
      assert.is(st.result?.state, 'STARTING', JSON.stringify(st) + c.stderr());
      if (i > 100) throw new Error(`not READY: ${c.stderr().slice(-1500)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    peer = await MqttConnection.open({
      settings: resolveMqttSettings(parseChannelMqttUrl(url, 'peer').endpoint),
      clientId: 'peer-e2e',
      clean: true,
      log: silent,
      onMessage: (topic, payload) => got.push({ topic, body: JSON.parse(new TextDecoder().decode(payload)) }),
    });
    await peer.ready(5000);
    await peer.subscribe('peer/replies');
    const send = (rid: string, from: string, text: string) =>
      peer!.publish('team.requests', JSON.stringify({ claw_mqtt: 1, reply_to: 'peer/replies', request_id: rid, message: { jsonrpc: '2.0', id: rid, method: 'channel.message', params: { from, text } } }));
    // The channel subscribes at STARTING; a first message may race its subscription: resend until answered.
    const end = Date.now() + 10_000;
    while (!got.some((g) => g.body.request_id === 'r1')) {
      if (Date.now() > end) throw new Error(`no reply from the channel; stderr ${c.stderr().slice(-1500)}`);
      await send('r1', 'alice', 'hello');
      await new Promise((r) => setTimeout(r, 200));
    }
    await send('r2', 'alice', 'echo ping');
    await send('r3', 'mallory', 'hello');
    const until = Date.now() + 10_000;
    while (!['r2', 'r3'].every((id) => got.some((g) => g.body.request_id === id))) {
      if (Date.now() > until) throw new Error(`missing replies: ${JSON.stringify(got)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const reply = (id: string) => got.find((g) => g.body.request_id === id)!.body.message;
    assert.equal(reply('r1').result, { reply: 'Hello from the queue agent.', outcome: 'message', tool_calls: 0 });
    assert.equal(reply('r2').result, { reply: 'Echoed: ping', outcome: 'message', tool_calls: 1 });
    const denied = reply('r3');
    assert.is(denied.error.code, -32050);
    assert.is(denied.error.data.reason, 'not_allowed');
    assert.not.ok(JSON.stringify(denied).includes('alice'), 'a refusal never names an allowed id');
  } finally {
    await peer?.close();
    assert.is(await c.end(), 0, c.stderr().slice(-1500));
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
    await new Promise<void>((r) => broker.close(() => r()));
  }
  // The tool call went through the gates: requested → authorized → executed, in the verified chain.
  const audit = readFileSync(join(dir, 'data', 'audit', 'audit.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const kinds = audit.map((r) => r.kind);
  for (const k of ['capability.requested', 'authorization.decided', 'execution.started', 'execution.finished']) assert.ok(kinds.includes(k), `${k} in ${kinds}`);
  assert.equal(audit.filter((r) => r.kind === 'capability.requested').map((r) => [r.data.tool, r.data.origin]), [['echo', 'agent']]);
  rmSync(dir, { recursive: true, force: true });
});

test.run();
