import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type IncomingMessage } from 'node:http';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Telemetry } from '../../src/telemetry/telemetry.ts';
import { telemetrySettings } from '../../src/telemetry/config.ts';
import { sanitize, type TelemetryEvent } from '../../src/telemetry/event.ts';
import { ExportQueue, type Exporter } from '../../src/telemetry/exporter.ts';
import { fileExporter } from '../../src/telemetry/exporters/file.ts';
import { httpExporter } from '../../src/telemetry/exporters/http.ts';
import { sqliteExporter } from '../../src/telemetry/exporters/sqlite.ts';
import { openTelemetry } from '../../src/telemetry/open.ts';
import { openDatabase } from '../../src/memory/sqlite/open.ts';
import { Redactor } from '../../src/log/redactor.ts';
import { Agent } from '../../src/kernel/agent.ts';
import { Router } from '../../src/kernel/router.ts';
import { FakeClock, captureLogger, makeManifest, primitive, textFrame, until } from './helpers/fakes.ts';

function memoryExporter(fail = false): Exporter & { batches: TelemetryEvent[][] } {
  const batches: TelemetryEvent[][] = [];
  return {
    type: 'memory',
    batches,
    async export(b) {
      if (fail) throw new Error('collector down');
      batches.push(b);
    },
  };
}

function make(spec: Record<string, unknown>, o: { random?: () => number; redactor?: Redactor; fail?: boolean; capacity?: number } = {}) {
  const clock = new FakeClock();
  const exp = memoryExporter(o.fail);
  const errors: string[] = [];
  const t = new Telemetry(telemetrySettings({ exporters: [{ type: 'console' }], ...spec }), [{ exporter: exp, batch: { max_size: 2, flush_interval_ms: 1000 } }], {
    clock,
    random: o.random,
    redactor: o.redactor,
    claw: '0.3.0',
    agent: 'a1',
    queueCapacity: o.capacity,
    onExportError: (e, err) => errors.push(`${e}:${(err as Error).message}`),
  });
  const events = () => exp.batches.flat();
  return { clock, exp, t, errors, events };
}

test('§5.11 defaults: tool_calls, lifecycle, errors on; memory_ops and swarm_ops off', async () => {
  const { t, events } = make({});
  t.emit('tool_calls', 'tool.call', { tool: 'echo' });
  t.emit('memory_ops', 'memory.store', {});
  t.emit('swarm_ops', 'swarm.delegate', {});
  t.emit('lifecycle', 'lifecycle.transition', { from: 'INIT', to: 'STARTING' });
  t.emit('errors', 'error', { code: -32602 });
  await t.close();
  assert.equal(events().map((e) => e.event), ['tool.call', 'lifecycle.transition', 'error']);
  assert.equal(events()[0]!.agent, 'a1');
  assert.equal(events()[0]!.claw, '0.3.0');
  assert.equal(events()[0]!.timestamp, '2026-02-22T10:30:00.000Z');
});

test('explicit event switches override the defaults', async () => {
  const { t, events } = make({ events: { memory_ops: true, tool_calls: false } });
  t.emit('tool_calls', 'tool.call', {});
  t.emit('memory_ops', 'memory.store', { store: 's' });
  await t.close();
  assert.equal(events().map((e) => e.event), ['memory.store']);
});

test('sampling.rate 0 emits nothing, 1 everything, 0.5 follows the random source', async () => {
  const off = make({ sampling: { rate: 0 } });
  off.t.emit('lifecycle', 'x', {});
  await off.t.close();
  assert.equal(off.events().length, 0);
  assert.equal(off.t.stats().sampled_out, 1);
  const seq = [0.1, 0.7, 0.49, 0.5];
  const half = make({ sampling: { rate: 0.5 } }, { random: () => seq.shift()! });
  for (let i = 0; i < 4; i++) half.t.emit('lifecycle', `e${i}`, {});
  await half.t.close();
  assert.equal(half.events().map((e) => e.event), ['e0', 'e2']);
  assert.equal(half.t.stats().sampled_out, 2);
});

test('§5.11 invariant: prompt, messages, response bodies and reasoning never leave, at any depth', () => {
  const e = sanitize(
    {
      claw: '0.3.0',
      event: 'provider.call',
      category: 'tool_calls',
      timestamp: 't',
      prompt: 'secret plan',
      messages: [{ role: 'user', content: 'x' }],
      nested: { response_body: '{...}', Reasoning: 'think', keep: 1, deeper: [{ chain_of_thought: 'c', ok: true }] },
    },
    { strip_arguments: false, strip_results: false },
  );
  assert.equal(e, { claw: '0.3.0', event: 'provider.call', category: 'tool_calls', timestamp: 't', nested: { keep: 1, deeper: [{ ok: true }] } });
});

test('redaction.strip_arguments / strip_results replace with a placeholder; known secrets are masked', async () => {
  const redactor = new Redactor();
  redactor.add('hunter2-token');
  const { t, events } = make({ redaction: { strip_arguments: true, strip_results: true } }, { redactor });
  t.emit('tool_calls', 'tool.call', { tool: 'http', arguments: { url: 'x' }, result: 'r', error: 'auth failed with hunter2-token' });
  await t.close();
  assert.equal(events()[0]!.arguments, '[REDACTED]');
  assert.equal(events()[0]!.result, '[REDACTED]');
  assert.equal(events()[0]!.error, 'auth failed with [REDACTED]');
  const kept = make({});
  kept.t.emit('tool_calls', 'tool.call', { arguments: { a: 1 } });
  await kept.t.close();
  assert.equal(kept.events()[0]!.arguments, { a: 1 });
});

test('batches: max_size sends at once, flush_interval_ms sends the rest', async () => {
  const { t, exp, clock } = make({});
  t.emit('lifecycle', 'a', {});
  assert.is(exp.batches.length, 0);
  t.emit('lifecycle', 'b', {});
  await until(() => exp.batches.length === 1);
  t.emit('lifecycle', 'c', {});
  clock.advance(999);
  await new Promise((r) => setTimeout(r, 5));
  assert.is(exp.batches.length, 1);
  clock.advance(1);
  await until(() => exp.batches.length === 2);
  assert.equal(exp.batches.map((b) => b.map((e) => e.event)), [['a', 'b'], ['c']]);
  await t.close();
});

test('a full queue drops and counts; a failing exporter is counted, never thrown', async () => {
  const clock = new FakeClock();
  let release!: () => void;
  const slow: Exporter = { type: 'slow', export: () => new Promise<void>((r) => (release = r)) };
  const q = new ExportQueue(slow, { maxBatch: 1, flushIntervalMs: 10, capacity: 2 }, clock, () => {});
  const e = { claw: '0.3.0', event: 'x', category: 'lifecycle', timestamp: 't' } as TelemetryEvent;
  q.push(e); // in flight
  q.push(e);
  q.push(e);
  q.push(e); // over capacity
  assert.is(q.stats.dropped, 1);
  release();
  await until(() => q.stats.exported === 1);
  const failing = make({}, { fail: true });
  failing.t.emit('lifecycle', 'a', {});
  failing.t.emit('lifecycle', 'b', {});
  const stats = await failing.t.close();
  assert.is(stats.failed, 2);
  assert.equal(failing.errors, ['memory:collector down']);
});

test('latency histograms and token usage are metrics events', async () => {
  const { t, events } = make({});
  t.latency('tool:echo', 3);
  t.latency('tool:echo', 40);
  t.latency('tool:echo', 99_999);
  t.tokenUsage('openai', 12, 7);
  await t.close();
  const usage = events().find((e) => e.event === 'metrics.token_usage')!;
  assert.equal([usage.provider, usage.input_tokens, usage.output_tokens], ['openai', 12, 7]);
  const h = events().find((e) => e.event === 'metrics.latency')!.histogram as any;
  assert.is(h.name, 'tool:echo');
  assert.is(h.count, 3);
  assert.is(h.counts[1], 1); // ≤ 5 ms
  assert.is(h.counts[4], 1); // ≤ 50 ms
  assert.is(h.counts[h.counts.length - 1], 1); // overflow
  const none = make({ metrics: { token_usage: false, latency_histogram: false } });
  none.t.tokenUsage('p', 1, 1);
  none.t.latency('x', 1);
  await none.t.close();
  assert.is(none.events().length, 0);
});

test('file exporter appends JSON lines', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-tel-'));
  const path = join(dir, 'sub', 'events.jsonl');
  const f = fileExporter(path);
  const e = (n: string) => ({ claw: '0.3.0', event: n, category: 'lifecycle', timestamp: 't' }) as TelemetryEvent;
  await f.export([e('a'), e('b')]);
  await f.export([e('c')]);
  assert.equal(readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l).event), ['a', 'b', 'c']);
});

test('sqlite exporter writes rows to claw_telemetry', async () => {
  const db = await openDatabase({ path: ':memory:', adapter: 'sqljs' });
  const s = sqliteExporter('<mem>', async () => db);
  await s.export([{ claw: '0.3.0', event: 'tool.call', category: 'tool_calls', timestamp: '2026-01-01T00:00:00.000Z', agent: 'a', tool: 'echo' }]);
  const row = db.prepare('SELECT event, category, agent, data FROM claw_telemetry').get() as any;
  assert.equal([row.event, row.category, row.agent, JSON.parse(row.data).tool], ['tool.call', 'tool_calls', 'a', 'echo']);
  await s.close!();
});

async function collector(status = 200) {
  const got: { url: string; auth?: string; body: any }[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    let b = '';
    req.on('data', (c) => (b += c));
    req.on('end', () => {
      got.push({ url: req.url!, auth: req.headers.authorization, body: JSON.parse(b) });
      res.statusCode = status;
      res.end(status === 200 ? '{}' : 'internal details: sk-leaky');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as any).port;
  return { got, url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(r)) };
}

test('otlp exporter posts OTLP/HTTP JSON log records with the bearer token', async () => {
  const c = await collector();
  const x = httpExporter({ type: 'otlp', endpoint: `${c.url}/v1/logs`, token: 'tok-123456', fetch, service: { name: 'agent-x', version: '1.0.0' } });
  await x.export([{ claw: '0.3.0', event: 'tool.call', category: 'tool_calls', timestamp: '2026-01-01T00:00:00.000Z', duration_ms: 4, ok: true }]);
  await c.close();
  assert.is(c.got[0]!.url, '/v1/logs');
  assert.is(c.got[0]!.auth, 'Bearer tok-123456');
  const rl = c.got[0]!.body.resourceLogs[0];
  assert.equal(rl.resource.attributes[0], { key: 'service.name', value: { stringValue: 'agent-x' } });
  const rec = rl.scopeLogs[0].logRecords[0];
  assert.is(rec.timeUnixNano, '1767225600000000000');
  assert.equal(rec.body, { stringValue: 'tool.call' });
  assert.ok(rec.attributes.some((a: any) => a.key === 'duration_ms' && a.value.intValue === '4'));
  assert.ok(rec.attributes.some((a: any) => a.key === 'ok' && a.value.boolValue === true));
});

test('webhook exporter: a 500 fails the batch with the status only, never the response body', async () => {
  const c = await collector(500);
  const x = httpExporter({ type: 'webhook', endpoint: c.url, fetch, service: { name: 'a' } });
  const err = await x.export([{ claw: '0.3.0', event: 'e', category: 'errors', timestamp: '2026-01-01T00:00:00.000Z' }]).catch((e) => e);
  await c.close();
  assert.is(err.message, 'exporter endpoint answered HTTP 500');
  assert.equal(c.got[0]!.body.events[0].event, 'e');
});

test('openTelemetry: an unresolvable exporter secret disables that exporter, named, without its value', async () => {
  const log = captureLogger();
  const m = makeManifest(1, {
    telemetry: primitive('Telemetry', 't', { exporters: [{ type: 'webhook', endpoint: 'http://127.0.0.1:9/x', auth: { secret_ref: 'HOOK_KEY' } }, { type: 'console' }] }),
  });
  const lines: string[] = [];
  const t = await openTelemetry(m, {
    clock: new FakeClock(),
    log,
    redactor: new Redactor(),
    resolveSecret: async (ref) => {
      throw new Error(`secret_ref "${ref}" could not be resolved`);
    },
    fetch,
    writeStderr: (s) => lines.push(s),
    openSqlite: () => Promise.reject(new Error('unused')),
  });
  t!.emit('lifecycle', 'lifecycle.transition', { from: 'INIT', to: 'STARTING' });
  await t!.close();
  const warn = log.entries.find((e) => e.msg === 'telemetry exporter disabled')!;
  assert.equal([warn.fields!.exporter, warn.fields!.secret_ref], ['webhook', 'HOOK_KEY']);
  assert.is(JSON.parse(lines.join('').trim()).telemetry.event, 'lifecycle.transition');
});

test('the agent reports every lifecycle transition of a session, STARTING and STOPPED included', async () => {
  const clock = new FakeClock();
  const log = captureLogger();
  const seen: string[] = [];
  let closed = 0;
  const manifest = makeManifest(1);
  const agent = new Agent({
    clock,
    log,
    config: {},
    notify: () => {},
    loadWireManifest: async () => ({ manifest, issues: [] }),
    openTelemetry: async () => ({
      emit: (_c, _e, f) => seen.push(`${f!.from}>${f!.to}`),
      latency() {},
      tokenUsage() {},
      close: async () => void closed++,
    }),
  });
  const router = new Router({ dispatch: agent.dispatch, inflight: agent.inflight, log });
  const replies: any[] = [];
  router.handle(textFrame(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'claw.initialize', params: { protocolVersion: '0.3.0', clientInfo: { name: 'o', version: '1' }, manifest: {}, capabilities: {} } }), replies), 't');
  await until(() => replies.length === 1);
  router.handle(textFrame(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'claw.shutdown', params: {} }), replies), 't');
  await until(() => replies.length === 2);
  assert.equal(seen, ['INIT>STARTING', 'STARTING>READY', 'READY>STOPPING', 'STOPPING>STOPPED']);
  assert.is(closed, 1);
});

test.run();
