// The MQTT agent's request journal (src/transports/mqtt/journal.ts): stored replies and acknowledged-but-unanswered
// requests survive a restart. A retried request_id answered before the restart gets the stored reply; one the
// previous run never answered gets the interrupted error (-32603, reason "interrupted") and is not run again.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InboundFrame } from '../../src/kernel/ports.ts';
import { createFileJournal } from '../../src/transports/mqtt/journal.ts';
import { createMqttTransport } from '../../src/transports/mqtt/transport.ts';
import { connectMqttClient } from '../../src/transports/mqtt/client-mqtt.ts';
import { parseMqttUrl } from '../../src/transports/mqtt/endpoint.ts';
import { resolveMqttSettings } from '../../src/transports/mqtt/options.ts';
import { findMosquitto, startMosquitto, type Mosquitto } from '../helpers/mosquitto.ts';
import { captureLogger, until } from './helpers/fakes.ts';

const HAVE = findMosquitto() !== undefined;
if (!HAVE) console.log('SKIP mqtt-journal (broker cases): mosquitto not found');
const when = (c: boolean) => (c ? test : test.skip);
let broker: Mosquitto | undefined;
test.after(async () => {
  await broker?.stop();
});

const req = (text: string, requestId?: string) => ({ text, requestId, replyTo: 'r/t', style: 'properties' as const });

test('journal file: pending requests and stored replies reload; expired replies and torn lines are dropped', () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-mqtt-journal-'));
  let now = 1_000;
  const j = createFileJournal(dir, 'claw-s-a', { windowMs: 500, now: () => now });
  assert.equal(j.load(now, 500), { pending: [], done: [] });
  j.request({ k: 'r1', at: now, req: req('{"id":1}', 'r1') });
  j.request({ k: 'r2', at: now, req: req('{"id":2}', 'r2') });
  j.done({ k: 'r2', at: now, replies: ['{"id":2,"result":1}'] });
  j.request({ k: 'r3', at: now, req: req('{"id":3}', 'r3') });
  j.done({ k: 'r3', at: now - 600, replies: ['old'] });
  j.close();
  const file = join(dir, 'mqtt', 'claw-s-a.journal');
  appendFileSync(file, '{"t":"req","k":"torn","at":1'); // a crash mid-append
  const again = createFileJournal(dir, 'claw-s-a', { windowMs: 500, now: () => now });
  const loaded = again.load(now, 500);
  assert.equal(loaded.pending.map((p) => p.k), ['r1']);
  assert.equal(loaded.pending[0].req, req('{"id":1}', 'r1'));
  assert.equal(loaded.done.map((d) => [d.k, d.replies]), [['r2', ['{"id":2,"result":1}']]]);
  // Rewritten with the live records only.
  const lines = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(lines.map((l) => [l.t, l.k]), [['req', 'r1'], ['done', 'r2']]);
  again.close();
});

when(HAVE)('restart: a stored reply answers a retry; an unanswered request is answered interrupted, never run again', async () => {
  broker ??= await startMosquitto();
  const url = broker.url('/jr/agent');
  const dir = mkdtempSync(join(tmpdir(), 'claw-mqtt-journal-'));
  const settings = resolveMqttSettings(parseMqttUrl(url));
  const journal = () => createFileJournal(dir, 'claw-jr-agent', { windowMs: 300_000, now: Date.now });
  const runs: string[] = [];

  // First run: answers 'done-1', holds 'held-1' (as if mid-execution), then dies without answering it.
  const a = await createMqttTransport({ settings, log: captureLogger(), journal: journal(), drainMs: 0 });
  await a.ready(5000);
  a.start((f: InboundFrame) => {
    const m = JSON.parse((f.payload as { text: string }).text);
    runs.push(`a:${m.method}`);
    if (m.method === 'quick') f.reply({ jsonrpc: '2.0', id: m.id, result: 'quick done' });
  });
  const c = await connectMqttClient(url, { baseDir: '/' });
  let b: Awaited<ReturnType<typeof createMqttTransport>> | undefined;
  try {
    const quick = await c.request({ jsonrpc: '2.0', id: 1, method: 'quick' }, { requestId: 'done-1', timeoutMs: 3000 });
    assert.equal(quick, { jsonrpc: '2.0', id: 1, result: 'quick done' });
    const heldReply = c.request({ jsonrpc: '2.0', id: 2, method: 'slow' }, { requestId: 'held-1', timeoutMs: 8000 });
    await until(() => runs.includes('a:slow'), 3000);
    await a.close(); // drainMs 0: gone without answering 'held-1'
    await new Promise((r) => setTimeout(r, 100));

    // Second run on the same journal.
    const log = captureLogger();
    b = await createMqttTransport({ settings, log, journal: journal() });
    await b.ready(5000);
    b.start((f: InboundFrame) => {
      const m = JSON.parse((f.payload as { text: string }).text);
      runs.push(`b:${m.method}`);
      f.reply({ jsonrpc: '2.0', id: m.id, result: 'b ran it' });
    });
    const interrupted = { jsonrpc: '2.0', id: 2, error: { code: -32603, message: 'Internal error: the runtime stopped while processing this request; it was not run again', data: { request_id: 'held-1', reason: 'interrupted' } } };
    assert.equal(await heldReply, interrupted, 'the waiting caller hears it was interrupted');
    assert.equal(await c.request({ jsonrpc: '2.0', id: 2, method: 'slow' }, { requestId: 'held-1', timeoutMs: 3000 }), interrupted);
    assert.equal(await c.request({ jsonrpc: '2.0', id: 1, method: 'quick' }, { requestId: 'done-1', timeoutMs: 3000 }), quick);
    assert.equal(runs, ['a:quick', 'a:slow'], 'nothing ran twice, nothing ran in the second run');
    assert.match(log.text(), /answered as interrupted/);
  } finally {
    await b?.close();
    await a.close();
    await c.close();
  }
});

test.run();
