// Telemetry never blocks the agent (spec §5.11; bounded, drops counted), end to end: a
// `claw chat` whose webhook collector accepts connections and never answers still answers every line at
// once and exits within the close timeout; what the collector never took is said once on stderr. The
// file exporter beside it (its own queue) still gets every event.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeLlm, openaiJson, type FakeLlm } from '../helpers/fake-llm-server.ts';
import { makeAgent, removeAgents, chat, telemetryEvents, openaiProvider, msg, call } from './chat-helpers.ts';

let llm: FakeLlm;
let collector: Server;
let collectorUrl = '';
const sockets = new Set<Socket>();
let posts = 0;

test.before(async () => {
  llm = await startFakeLlm();
  collector = createServer(() => void posts++); // reads nothing, answers nothing
  collector.on('connection', (s) => (sockets.add(s), s.on('close', () => sockets.delete(s))));
  await new Promise<void>((r) => collector.listen(0, '127.0.0.1', () => r()));
  collectorUrl = `http://127.0.0.1:${(collector.address() as { port: number }).port}/hook`;
});
test.after(async () => {
  await llm.close();
  for (const s of sockets) s.destroy();
  await new Promise<void>((r) => collector.close(() => r()));
  removeAgents();
});

test('a collector that never answers: every turn answered, exit within the close timeout, the loss said once', async () => {
  const a = makeAgent({ providers: [openaiProvider(llm.url)] });
  const file = join(a.dir, 'claw.yaml');
  const m = JSON.parse(readFileSync(file, 'utf8'));
  m.spec.telemetry.inline.exporters.push({ type: 'webhook', endpoint: collectorUrl, batch: { max_size: 1, flush_interval_ms: 100 } });
  writeFileSync(file, JSON.stringify(m, null, 2));
  llm.queue(
    { json: openaiJson({ content: call('echo', { text: 'x' }), usage: [10, 2] }) },
    { json: openaiJson({ content: msg('REPLY-1'), usage: [10, 2] }) },
    { json: openaiJson({ content: msg('REPLY-2'), usage: [10, 2] }) },
  );
  const t0 = Date.now();
  const r = await chat(a, ['PROMPT-1', 'PROMPT-2'], { args: ['--log-level', 'warn'] });
  const ms = Date.now() - t0;
  assert.is(r.code, 0, r.stderr);
  assert.equal(r.replies, ['REPLY-1', 'REPLY-2']);
  assert.ok(posts >= 1, 'the collector was reached');
  // Start-up + two turns + at most the 2 s close timeout (src/telemetry/telemetry.ts CLOSE_TIMEOUT_MS).
  assert.ok(ms < 6000, `claw chat took ${ms} ms`);
  const lost = r.stderr.split('\n').filter((l) => l.includes('telemetry events lost')).map((l) => JSON.parse(l));
  assert.is(lost.length, 1, r.stderr);
  assert.equal([lost[0].dropped, lost[0].failed], [0, 0]);
  assert.ok(lost[0].abandoned > 0 && lost[0].exported > 0, JSON.stringify(lost[0]));
  // The file exporter has its own queue: it got the whole session.
  const ev = telemetryEvents(a);
  assert.equal(ev.filter((e) => e.event === 'lifecycle.transition').map((e) => `${e.from}>${e.to}`), ['INIT>STARTING', 'STARTING>READY', 'READY>STOPPING', 'STOPPING>STOPPED']);
  assert.is(ev.filter((e) => e.event === 'tool.call').length, 1);
});

test.run();
