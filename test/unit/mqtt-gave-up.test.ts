// A QoS 1 publish that was handed to mqtt.js but never reached the broker (the link stalled, then dropped) sits in
// mqtt.js's outgoing store, and mqtt.js sends it again after the reconnect. For a request whose caller already
// timed out, that would make a peer run something nobody waits for (docs/transports.md "MQTT"). Against aedes,
// through a proxy that can swallow the client's bytes and cut the link.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createConnection, createServer, type Socket } from 'node:net';
import { MqttConnection } from '../../src/transports/mqtt/connection.ts';
import { parseMqttUrl } from '../../src/transports/mqtt/endpoint.ts';
import { resolveMqttSettings } from '../../src/transports/mqtt/options.ts';
import { startAedes, type InProcessBroker } from './helpers/aedes.ts';
import { captureLogger, until } from './helpers/fakes.ts';

let mqttd: InProcessBroker;
const closers: (() => Promise<unknown>)[] = [];
test.before(async () => {
  mqttd = await startAedes();
});
test.after.each(async () => {
  for (const c of closers.splice(0).reverse()) await c().catch(() => {});
});
test.after(() => mqttd.close());

/** A TCP proxy to the broker that can swallow what clients send (`stall`) and cut every link (`cut`). */
async function stallingProxy(target: number) {
  let stalled = false;
  const links = new Set<Socket>();
  const server = createServer((client) => {
    const up = createConnection(target, '127.0.0.1');
    links.add(client).add(up);
    client.on('data', (b) => void (stalled || up.write(b)));
    up.on('data', (b) => client.write(b));
    const end = () => (client.destroy(), up.destroy(), links.delete(client), links.delete(up));
    client.on('close', end).on('error', end);
    up.on('close', end).on('error', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  closers.push(() => new Promise((r) => (links.forEach((s) => s.destroy()), server.close(r))));
  return {
    port: (server.address() as { port: number }).port,
    stall: () => void (stalled = true),
    resume: () => void (stalled = false),
    cut: () => links.forEach((s) => s.destroy()),
  };
}

const settings = (port: number) => {
  const s = resolveMqttSettings(parseMqttUrl(`mqtt://127.0.0.1:${port}/gaveup?protocol=3.1.1`));
  s.backoff = { initialDelayMs: 50, maxDelayMs: 100 };
  return s;
};

test('a publish its sender gave up on after mqtt.js took it is not sent again after the reconnect; one still wanted is', async () => {
  const got: string[] = [];
  const watcher = await MqttConnection.open({ settings: settings(mqttd.port), clientId: 'gaveup-watch', clean: true, log: captureLogger(), onMessage: (_t, p) => got.push(new TextDecoder().decode(p)) });
  closers.push(() => watcher.close());
  await watcher.ready(3000);
  await watcher.subscribe('gaveup/inbox');

  const proxy = await stallingProxy(mqttd.port);
  const connects: boolean[] = [];
  const conn = await MqttConnection.open({ settings: settings(proxy.port), clientId: 'gaveup-req', clean: true, log: captureLogger(), onMessage: () => {}, onConnect: (s) => connects.push(s) });
  closers.push(() => conn.close({ graceMs: 200 }));
  await conn.ready(3000);

  proxy.stall();
  const gaveUp = new AbortController();
  const abandoned = conn.publish('gaveup/inbox', 'abandoned', { signal: gaveUp.signal }).then(
    () => 'acked',
    (e: Error) => e.message,
  );
  const wanted = conn.publish('gaveup/inbox', 'wanted', { signal: new AbortController().signal }).then(
    () => 'acked',
    (e: Error) => e.message,
  );
  await new Promise((r) => setTimeout(r, 150));
  assert.equal(got, [], 'the proxy let a publish through while stalled');
  gaveUp.abort(); // the caller's timeout
  proxy.resume();
  proxy.cut();
  await until(() => connects.length >= 2, 5000);
  assert.is(await wanted, 'acked', 'mqtt.js sent the one still wanted again, and the broker acknowledged it');
  await until(() => got.includes('wanted'), 3000);
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(got, ['wanted'], 'the abandoned publish reached the broker after the reconnect');
  const settled = await Promise.race([abandoned, new Promise((r) => setTimeout(() => r('still pending'), 100))]);
  assert.match(String(settled), /removed/i, 'the abandoned publish settles as removed');
  assert.equal(conn.pending, { publishes: 0, bytes: 0 });
});

test.run();
