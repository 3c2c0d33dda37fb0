// Policy audit.destination copies (src/audit/sinks.ts, sink-*.ts): the hash-chained file is always
// written first; sqlite rows equal its lines; the webhook batches and a down or hanging endpoint
// never delays or fails a tool call; syslog sends RFC 5424 datagrams.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createSocket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { openAuditSession, type AuditSessionOptions } from '../../src/audit/session.ts';
import { openDatabase } from '../../src/memory/sqlite/open.ts';
import { webhookSink } from '../../src/audit/sink-webhook.ts';
import { formatSyslog } from '../../src/audit/sink-syslog.ts';
import { verifyAuditText } from '../../src/audit/verify.ts';
import { compileArgumentSchema } from '../../src/tools/json-schema.ts';
import { runGates } from '../../src/gates/pipeline.ts';
import { boundTool, fakeImpl, makeCall, makeDeps, ok } from './helpers/gate-fakes.ts';
import type { WebhookSink } from '../../src/audit/sink-webhook.ts';

const dir = mkdtempSync(join(tmpdir(), 'claw-audit-mirror-'));
let n = 0;
const base = { now: () => Date.UTC(2026, 10, 22), monotonic: () => 0, redact: (s: string) => s, fsync: 'none' as const };
const fileLines = (path: string) => readFileSync(path, 'utf8').split('\n').slice(0, -1);

function session(destination: string, extra: Partial<AuditSessionOptions> = {}) {
  const path = join(dir, `s${n++}`, 'audit.jsonl');
  const warnings: string[] = [];
  const s = openAuditSession({ ...base, path, policies: [{ name: 'p', spec: { rules: [], audit: { destination } } }], warn: (m) => warnings.push(m), ...extra })!;
  return { s, path, warnings };
}

async function toolCall(s: NonNullable<ReturnType<typeof openAuditSession>>, id: string) {
  const deps = makeDeps();
  deps.observe = s.auditor.observe;
  const call = makeCall({ tool: boundTool({ impl: fakeImpl(async () => ok('done')) }), args: { id } });
  return s.auditor.run(call, 'operator', () => runGates(call, compileArgumentSchema({ type: 'object' }), deps));
}

function listen(handler: (req: IncomingMessage, body: string, res: import('node:http').ServerResponse) => void): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => handler(req, body, res));
  });
  return new Promise((res) => server.listen(0, '127.0.0.1', () => res({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/audit` })));
}

test('sqlite: every record of the file is a row with the same line, seq, kind and hash', async () => {
  const { s, path, warnings } = session('sqlite', { runtime: { sqlite: { path: join(dir, 'mirror.sqlite') } }, sinkDeps: { sqliteAdapter: 'sqljs' } });
  assert.match(s.settings.notes[0], /mirrored into .*mirror\.sqlite \(table audit_records\)/);
  for (let i = 0; i < 3; i++) assert.equal(await toolCall(s, `c${i}`), ok('done'));
  await s.close();
  const lines = fileLines(path);
  assert.is(lines.length, 13); // opened + 3 × (requested, decided, started, finished)
  assert.is(verifyAuditText(readFileSync(path)).ok, true);
  const db = await openDatabase({ path: join(dir, 'mirror.sqlite'), adapter: 'sqljs' });
  const rows = db.prepare('SELECT seq, kind, hash, prev, ts, record FROM audit_records ORDER BY seq').all();
  db.close();
  assert.equal(rows.map((r) => r.record), lines);
  assert.equal(rows.map((r) => [r.seq, r.kind, r.hash, r.prev, r.ts]), lines.map((l) => JSON.parse(l)).map((r) => [r.seq, r.kind, r.hash, r.prev, r.ts]));
  assert.equal(warnings, []);
});

test('sqlite: retention drops the rows of the deleted segments by seq, so records stamped at 1970 that the files keep stay', async () => {
  const MIN = 60_000;
  const c = { wall: 60_000, mono: 0 };
  const sub = join(dir, `s${n++}`);
  const open = () =>
    openAuditSession({
      ...base,
      now: () => c.wall,
      monotonic: () => c.mono,
      path: join(sub, 'audit.jsonl'),
      policies: [{ name: 'p', spec: { rules: [], audit: { destination: 'sqlite', retention: '15m' } } }],
      runtime: { sqlite: { path: join(sub, 'mirror.sqlite') }, segment_seconds: 600 },
      sinkDeps: { sqliteAdapter: 'sqljs' },
    })!;
  const step = async (s: ReturnType<typeof open>, ms: number, id: string) => ((c.wall += ms), (c.mono += ms), await toolCall(s, id));
  const a = open();
  await step(a, 0, 'a'); // stamped 1970
  await step(a, 10 * MIN, 'b'); // rotates: a segment closed at 1970
  c.wall = Date.UTC(2026, 11, 7, 8); // NTP
  await step(a, 10 * MIN, 'c'); // rotates: a segment closed at 2026
  await a.close();
  c.wall += 20 * MIN; // off for 20 min; the restart cannot know the 1970 segment's age, so it keeps the chain from it
  const b = open();
  await step(b, 0, 'd');
  await b.close();
  const files = readdirSync(sub).filter((f) => f.startsWith('audit')).sort();
  const lines = files.filter((f) => f !== 'audit.jsonl').concat('audit.jsonl').flatMap((f) => fileLines(join(sub, f)));
  const db = await openDatabase({ path: join(sub, 'mirror.sqlite'), adapter: 'sqljs' });
  const rows = db.prepare('SELECT record FROM audit_records ORDER BY seq').all();
  db.close();
  assert.ok(lines.some((l) => JSON.parse(l).ts.startsWith('1970')), `records stamped before the step are still in the files: ${files.join()}`);
  assert.equal(rows.map((r) => r.record), lines);
});

test('sqlite: a database that cannot be opened is told once; tool calls and the file go on', async () => {
  const { s, path, warnings } = session('sqlite', { runtime: { sqlite: { path: '/proc/claw-no-such-dir/x.sqlite' } }, sinkDeps: { sqliteAdapter: 'sqljs' } });
  for (let i = 0; i < 3; i++) assert.equal(await toolCall(s, `c${i}`), ok('done'));
  await s.close();
  assert.is(fileLines(path).length, 13);
  assert.is(warnings.length, 1);
  assert.match(warnings[0], /sqlite mirror failed/);
});

test('webhook: records POSTed in batches of batch_max, bodies are the file lines, bearer token sent', async () => {
  const bodies: { records: unknown[] }[] = [];
  const auths: (string | undefined)[] = [];
  const { server, url } = await listen((req, body, res) => {
    auths.push(req.headers.authorization);
    bodies.push(JSON.parse(body));
    res.end('{}');
  });
  const { s, path, warnings } = session('webhook', {
    runtime: { webhook: { url, auth_secret_ref: 'AUDIT_TOKEN', batch_max: 5, flush_ms: 20 } },
    sinkDeps: { secret: async (ref) => (ref === 'AUDIT_TOKEN' ? 'tok-123' : '') },
  });
  for (let i = 0; i < 3; i++) await toolCall(s, `c${i}`);
  await s.close();
  server.close();
  const lines = fileLines(path);
  assert.equal(bodies.map((b) => b.records.length), [5, 5, 3]);
  assert.equal(bodies.flatMap((b) => b.records), lines.map((l) => JSON.parse(l)));
  assert.equal(auths, ['Bearer tok-123', 'Bearer tok-123', 'Bearer tok-123']);
  assert.equal((s.mirror as WebhookSink).stats(), { sent: 13, dropped: 0, failed: 0, queued: 0 });
  assert.equal(warnings, []);
});

test('webhook: a refused or hanging endpoint never delays or fails a tool call; failures counted, told once', async () => {
  // Hanging: accepts and never answers.
  const { server, url } = await listen(() => {});
  for (const target of [url, 'http://127.0.0.1:1/audit']) {
    const { s, path, warnings } = session('webhook', { runtime: { webhook: { url: target, batch_max: 2, flush_ms: 1, timeout_ms: 300 } } });
    const t0 = performance.now();
    for (let i = 0; i < 10; i++) assert.equal(await toolCall(s, `c${i}`), ok('done'));
    const callsMs = performance.now() - t0;
    assert.ok(callsMs < 250, `10 tool calls took ${callsMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
    await s.close();
    assert.is(fileLines(path).length, 41);
    // A batch still in flight at close is counted when its timeout aborts it.
    for (let i = 0; i < 100; i++) {
      const x = (s.mirror as WebhookSink).stats();
      if (x.failed + x.dropped >= 41) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const st = (s.mirror as WebhookSink).stats();
    assert.is(st.sent, 0);
    assert.is(st.failed + st.dropped, 41);
    assert.ok(warnings.length >= 1 && warnings.length <= 2, warnings.join('|'));
    assert.match(warnings[0], /could not be delivered/);
  }
  server.closeAllConnections();
  server.close();
});

test('webhook: a full queue drops (counted, told once) instead of growing', async () => {
  const warnings: string[] = [];
  let posts = 0;
  const w = webhookSink({ url: 'http://x.invalid/', queueMax: 3, batchMax: 100, flushMs: 60_000, fetch: (async () => (posts++, new Response('{}'))) as typeof fetch, warn: (m) => warnings.push(m) });
  for (let i = 0; i < 5; i++) w.write({} as any, `{"n":${i}}`);
  assert.equal(w.stats(), { sent: 0, dropped: 2, failed: 0, queued: 3 });
  await w.close();
  assert.equal([posts, w.stats().sent], [1, 3]);
  assert.is(warnings.length, 2); // queue full (once) + the session summary
});

test('syslog: RFC 5424 datagrams to a local UDP socket, one per record', async () => {
  const sock = createSocket('udp4');
  const got: string[] = [];
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', () => r()));
  sock.on('message', (m) => got.push(m.toString('utf8')));
  const port = (sock.address() as AddressInfo).port;
  const { s, path } = session('syslog', { runtime: { syslog: { port, app_name: 'claw-test' } } });
  await toolCall(s, 'c0');
  await s.close();
  const lines = fileLines(path);
  for (let i = 0; i < 50 && got.length < lines.length; i++) await new Promise((r) => setTimeout(r, 10));
  sock.close();
  assert.is(got.length, 5);
  const recs = lines.map((l) => JSON.parse(l));
  const byseq = new Map(got.map((g) => [Number(/seq="(\d+)"/.exec(g)![1]), g]));
  for (const r of recs) {
    const g = byseq.get(r.seq)!;
    // <13*8+6>1 TS HOST APP PROCID MSGID [SD] BOM MSG
    const m = /^<110>1 (\S+) (\S+) claw-test (\d+) (\S+) \[claw-audit@32473 seq="(\d+)" hash="([0-9a-f]{64})"\] \uFEFF(.*)$/s.exec(g);
    assert.ok(m, g);
    assert.equal([m![1], m![3], m![4], m![6], m![7]], [r.ts, String(process.pid), r.kind, r.hash, lines[r.seq]]);
  }
});

test('syslog: severity notice for a denial, informational otherwise; oversized records carry seq and hash only', () => {
  const o = { facility: 13, appName: 'claw', hostname: 'h', procId: 1 };
  const deny = { v: 1, seq: 3, ts: 'T', kind: 'authorization.decided' as const, prev: 'p', hash: 'h'.repeat(64), data: { decision: 'deny' } };
  assert.is(formatSyslog(deny, 'L', o), `<109>1 T h claw 1 authorization.decided [claw-audit@32473 seq="3" hash="${'h'.repeat(64)}"] \uFEFFL`);
  assert.ok(formatSyslog({ ...deny, data: { decision: 'allow' } }, 'L', o).startsWith('<110>1 '));
  assert.ok(formatSyslog(deny, 'x'.repeat(70_000), o).endsWith(`\uFEFF{"truncated":true,"seq":3,"hash":"${'h'.repeat(64)}"}`));
});

test('webhook destination without audit.webhook in claw.runtime.yaml: a note, the file only', async () => {
  const { s, path } = session('webhook');
  assert.match(s.settings.notes[0], /no audit\.webhook\.url in claw\.runtime\.yaml/);
  assert.is(s.mirror, undefined);
  await s.close();
  assert.is(fileLines(path).length, 1);
});

test.after(() => rmSync(dir, { recursive: true, force: true }));
test.run();
