// Telemetry's bounded queue (spec §5.11 "never blocks"; bounded, drops counted): emit()
// never waits, a full queue drops and counts, and the counts are said once at session end — through the
// runtime's real opener (openTelemetry) with a real file exporter and a real HTTP exporter to a dead port.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTelemetry } from '../../src/telemetry/open.ts';
import { CLOSE_TIMEOUT_MS, DEFAULT_QUEUE_CAPACITY } from '../../src/telemetry/telemetry.ts';
import { Redactor } from '../../src/log/redactor.ts';
import { FakeClock, captureLogger, makeManifest, primitive } from './helpers/fakes.ts';

const deps = (log: ReturnType<typeof captureLogger>) => ({
  clock: new FakeClock(),
  log,
  redactor: new Redactor(),
  resolveSecret: async () => 'unused',
  fetch,
  writeStderr: () => {},
  openSqlite: () => Promise.reject(new Error('unused')),
});

test('a full queue drops the overflow without waiting; the drop count is logged once at close, nothing else lost', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-tel-drops-'));
  try {
    const path = join(dir, 'events.jsonl');
    const log = captureLogger();
    // A batch larger than the queue and a long interval: nothing leaves before close, so the queue fills.
    const m = makeManifest(1, { telemetry: primitive('Telemetry', 't', { exporters: [{ type: 'file', path, batch: { max_size: 50_000, flush_interval_ms: 60_000 } }] }) });
    const t = (await openTelemetry(m, deps(log)))!;
    const over = 7;
    const started = performance.now();
    for (let i = 0; i < DEFAULT_QUEUE_CAPACITY + over; i++) t.emit('errors', 'error', { code: -32000, n: i });
    const emitMs = performance.now() - started;
    assert.equal(t.stats(), { exported: 0, dropped: over, failed: 0, sampled_out: 0, abandoned: 0 });
    const stats = await t.close();
    assert.equal(stats, { exported: DEFAULT_QUEUE_CAPACITY, dropped: over, failed: 0, sampled_out: 0, abandoned: 0 });
    const lines = readFileSync(path, 'utf8').trim().split('\n');
    assert.is(lines.length, DEFAULT_QUEUE_CAPACITY);
    // The first events are kept, the overflow is what was dropped.
    assert.equal([JSON.parse(lines[0]!).n, JSON.parse(lines[lines.length - 1]!).n], [0, DEFAULT_QUEUE_CAPACITY - 1]);
    const warns = log.entries.filter((e) => e.msg === 'telemetry events lost');
    assert.equal(warns.map((w) => w.fields), [{ dropped: over, failed: 0, abandoned: 0, exported: DEFAULT_QUEUE_CAPACITY }]);
    // emit() only pushes: 10,007 events in well under a second even on a loaded board.
    assert.ok(emitMs < 1000, `emit took ${emitMs} ms`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a collector that is down: failed batches counted and said at close; a clean session says nothing', async () => {
  const log = captureLogger();
  const m = makeManifest(1, { telemetry: primitive('Telemetry', 't', { exporters: [{ type: 'webhook', endpoint: 'http://127.0.0.1:9/hook', batch: { max_size: 2 } }] }) });
  const t = (await openTelemetry(m, deps(log)))!;
  t.emit('errors', 'error', { code: -32000 });
  t.emit('errors', 'error', { code: -32001 });
  t.emit('errors', 'error', { code: -32002 });
  const stats = await t.close();
  assert.equal([stats.exported, stats.dropped, stats.failed], [0, 0, 3]);
  assert.equal(log.entries.filter((e) => e.msg === 'telemetry events lost').map((w) => w.fields), [{ dropped: 0, failed: 3, abandoned: 0, exported: 0 }]);

  const clean = captureLogger();
  const dir = mkdtempSync(join(tmpdir(), 'claw-tel-drops-'));
  try {
    const ok = (await openTelemetry(makeManifest(1, { telemetry: primitive('Telemetry', 't', { exporters: [{ type: 'file', path: join(dir, 'e.jsonl') }] }) }), deps(clean)))!;
    ok.emit('errors', 'error', { code: -32000 });
    assert.equal(await ok.close(), { exported: 1, dropped: 0, failed: 0, sampled_out: 0, abandoned: 0 });
    assert.is(clean.entries.filter((e) => e.msg === 'telemetry events lost').length, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a collector that never answers: close gives up after CLOSE_TIMEOUT_MS and counts what it abandoned', async () => {
  const clock = new FakeClock();
  const log = captureLogger();
  const hanging: typeof fetch = (_u, init) => new Promise((_r, reject) => init?.signal?.addEventListener('abort', () => reject(new Error('aborted'))));
  const m = makeManifest(1, { telemetry: primitive('Telemetry', 't', { exporters: [{ type: 'webhook', endpoint: 'http://collector.invalid/hook', batch: { max_size: 2 } }] }) });
  const t = (await openTelemetry(m, { ...deps(log), clock, fetch: hanging }))!;
  for (let i = 0; i < 5; i++) t.emit('errors', 'error', { code: -32000 - i }); // a batch of 2 in flight, 3 queued
  let done: Awaited<ReturnType<typeof t.close>> | undefined;
  const closing = t.close().then((s) => (done = s));
  await new Promise((r) => setTimeout(r, 10));
  assert.is(done, undefined, 'close waits for the exporter…');
  clock.advance(CLOSE_TIMEOUT_MS);
  await closing;
  assert.equal([done!.exported, done!.failed, done!.dropped, done!.abandoned], [0, 0, 0, 5], '…but not beyond its timeout');
  assert.equal(log.entries.filter((e) => e.msg === 'telemetry events lost').map((w) => w.fields), [{ dropped: 0, failed: 0, abandoned: 5, exported: 0 }]);
});

test.run();
