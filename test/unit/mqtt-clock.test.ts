// The MQTT transport's timing across a step of the wall clock (a board without RTC: NTP's first answer moves it
// by hours, `date -s` back): the request_id dedup window counts on the monotonic clock, the journal ages its
// wall stamps with kernel/wall-age.ts, and `claw send`'s connect deadline is monotonic.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InboundFrame } from '../../src/kernel/ports.ts';
import { WallAges } from '../../src/kernel/wall-age.ts';
import { createFileJournal } from '../../src/transports/mqtt/journal.ts';
import { createMqttTransport } from '../../src/transports/mqtt/transport.ts';
import { connectMqttClient } from '../../src/transports/mqtt/client-mqtt.ts';
import { parseMqttUrl } from '../../src/transports/mqtt/endpoint.ts';
import { resolveMqttSettings } from '../../src/transports/mqtt/options.ts';
import { freePort, useMosquitto } from '../helpers/mosquitto.ts';
import { captureLogger, FakeClock } from './helpers/fakes.ts';

const mq = useMosquitto(test, 'mqtt-clock');
const HOUR = 3_600_000;

mq.when()('a retried request_id after the wall clock steps forward an hour is answered from the stored reply, not run again', async () => {
  let step = 0;
  const url = mq.broker().url('/clk/a1');
  const t = mq.track(await createMqttTransport({ settings: resolveMqttSettings(parseMqttUrl(url)), log: captureLogger(), now: () => Date.now() + step }));
  await t.ready(5000);
  let runs = 0;
  t.start((f: InboundFrame) => {
    const m = 'text' in f.payload ? JSON.parse(f.payload.text) : undefined;
    if (m?.id !== undefined) f.reply({ jsonrpc: '2.0', id: m.id, result: { run: ++runs } });
  });
  const c = mq.track(await connectMqttClient(url, { baseDir: '/' }));
  const first = await c.request({ jsonrpc: '2.0', id: 1, method: 'work' }, { timeoutMs: 5000, requestId: 'rid-step' });
  step = HOUR; // NTP's first answer: 5 minutes of window are gone by the wall clock, none by the monotonic one
  const retry = await c.request({ jsonrpc: '2.0', id: 1, method: 'work' }, { timeoutMs: 5000, requestId: 'rid-step' });
  assert.equal(retry, first);
  assert.is(runs, 1, 'the retried request ran twice');
});

test('journal: a reply stored just before a forward step survives compaction; it still expires by its monotonic age', () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-mqtt-clock-'));
  try {
    const clock = new FakeClock();
    const ages = new WallAges(clock);
    const j = createFileJournal(dir, 'claw-s-a', { windowMs: 300_000, now: () => clock.now(), ages: () => ages.ages(), compactEvery: 1 });
    j.load(clock.now(), 300_000);
    j.done({ k: 'r1', at: clock.now(), replies: ['{"id":1,"result":1}'] });
    clock.mono += 1_000;
    clock.wall += HOUR;
    j.request({ k: 'r2', at: clock.now(), req: { text: '{"id":2}', requestId: 'r2', replyTo: 'r/t', style: 'properties' } }); // compacts
    const file = join(dir, 'mqtt', 'claw-s-a.journal');
    assert.ok(readFileSync(file, 'utf8').includes('"k":"r1"'), 'the stored reply was dropped by the step');
    clock.mono += 300_000;
    clock.wall += 300_000;
    j.request({ k: 'r3', at: clock.now(), req: { text: '{"id":3}', requestId: 'r3', replyTo: 'r/t', style: 'properties' } });
    assert.not.ok(readFileSync(file, 'utf8').includes('"k":"r1"'), 'kept past its window');
    j.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('claw send: the connect deadline holds when the wall clock steps back an hour', async () => {
  const port = await freePort(); // nothing listens: the client retries until its deadline
  const real = Date.now;
  let first = true;
  Date.now = () => (first ? ((first = false), real()) : real() - HOUR);
  const started = performance.now();
  let outcome: unknown;
  try {
    outcome = await Promise.race([
      connectMqttClient(`mqtt://127.0.0.1:${port}/clk/a1`, { baseDir: '/', connectTimeoutMs: 300 }).then(
        (c) => (c.close(), 'connected'),
        (e: { code?: string }) => e.code,
      ),
      new Promise((r) => setTimeout(() => r('still waiting'), 3000)),
    ]);
  } finally {
    Date.now = real;
  }
  // A client stuck past its deadline cannot be closed from here (its reconnect timer keeps the process alive):
  // the file ends a second after uvu has reported the failure.
  if (outcome === 'still waiting') setTimeout(() => process.exit(1), 1000);
  assert.is(outcome, 'unreachable');
  assert.ok(performance.now() - started < 2500);
});

test.run();
