// Filesystem transport behaviour beyond the contract (docs/transports.md): request_id dedup across
// restarts, crash recovery, stray .tmp files, rejected files, archive/delete, retention.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import { createFsTransport } from '../../src/transports/fs/transport.ts';
import { resolveFsOptions, parseFsUri, type FsTransportOptions } from '../../src/transports/fs/options.ts';
import { sweep } from '../../src/transports/fs/maintenance.ts';
import { parseFileName, timestampNs } from '../../src/transports/fs/layout.ts';
import type { InboundFrame, Transport } from '../../src/kernel/ports.ts';
import { captureLogger, tick, until } from './helpers/fakes.ts';
import { echo } from './transport-contract.ts';
import { systemClock } from '../../src/node/clock.ts';

// Whatever a failing test leaves open is closed after it, so a failure never hangs the run.
const opened: Transport[] = [];
test.after.each(async () => {
  for (const t of opened.splice(0)) await t.close();
});

function setup(options: FsTransportOptions = {}, dir = mkdtempSync(`${tmpdir()}/claw-fs-`)) {
  const frames: InboundFrame[] = [];
  const log = captureLogger();
  const t = createFsTransport({ dir, clock: systemClock, options: resolveFsOptions({ poll_interval_ms: 20, fsync: false, ...options }), log, maxFrameBytes: 4096 });
  opened.push(t);
  return { dir, frames, log, t, start: (handler: (f: InboundFrame) => void = echo) => t.start((f) => (frames.push(f), handler(f))) };
}
/** A current timestamp_ns prefix (16 of the 19 digits): test files look like real ones to the sweep. */
const T = String(BigInt(Date.now()) * 1_000_000n).slice(0, 16);
/** Complete files only: a writer's `.tmp` is not there yet. */
const ls = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((n) => !n.endsWith('.tmp')).sort() : []);
const put = (dir: string, name: string, body: string) => {
  mkdirSync(`${dir}/inbox`, { recursive: true });
  writeFileSync(`${dir}/inbox/${name}`, body);
};
const reqText = (id: unknown, extra: Record<string, unknown> = {}) => JSON.stringify({ jsonrpc: '2.0', id, method: 'm', params: { n: 1 }, ...extra });
async function replyFor(dir: string, rid: string, sub = 'outbox'): Promise<any> {
  await until(() => ls(`${dir}/${sub}`).some((n) => n.endsWith(`-${rid}.json`)), 3000);
  const name = ls(`${dir}/${sub}`).find((n) => n.endsWith(`-${rid}.json`))!;
  return JSON.parse(readFileSync(`${dir}/${sub}/${name}`, 'utf8'));
}
const stop = async (t: Transport, dir: string) => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
};

test('file names: {timestamp_ns}-{request_id}.json; timestamps are 19 digits and strictly increasing', () => {
  assert.equal(parseFileName('1795309459892000000-abc-1.json'), { ts: '1795309459892000000', requestId: 'abc-1' });
  assert.is(parseFileName('x-abc.json'), undefined);
  assert.is(parseFileName('123-.json'), undefined);
  assert.is(parseFileName('123-../x.json'), undefined);
  assert.is(parseFileName('123-abc.json.tmp'), undefined);
  const a = timestampNs(1000);
  const b = timestampNs(1000);
  assert.is(a.length, 19);
  assert.ok(b > a);
});

test('fs: URIs: absolute, relative, fs:///, options as query parameters; mistakes are errors', () => {
  assert.equal(parseFsUri('fs:/a/b/', '/cwd'), { dir: '/a/b', options: {} });
  assert.equal(parseFsUri('fs:rel/x', '/cwd'), { dir: '/cwd/rel/x', options: {} });
  assert.equal(parseFsUri('fs:///a?watch=false&poll_interval_ms=50', '/cwd'), { dir: '/a', options: { watch: false, poll_interval_ms: 50 } });
  assert.ok('error' in parseFsUri('fs://host/a', '/cwd'));
  assert.ok('error' in parseFsUri('fs:', '/cwd'));
  assert.ok('error' in parseFsUri('fs:/a?bogus=1', '/cwd'));
  assert.ok('error' in parseFsUri('fs:/a?watch=yes', '/cwd'));
  assert.ok('error' in parseFsUri('fs:/a?dedup_retention_ms=10', '/cwd'), 'dedup retention under 5 min refused');
});

test('a refusal before any work (not initialized, invalid params) is not stored: a retry of the request_id runs', async () => {
  const s = setup();
  let ready = false;
  let runs = 0;
  s.start((f) => {
    const msg = JSON.parse((f.payload as { text: string }).text);
    if (!ready) return f.reply({ jsonrpc: '2.0', id: msg.id, error: { code: -32600, message: 'Invalid request: m is not accepted now: send claw.initialize first (spec §9.3.1)', data: { state: 'INIT' } } });
    runs++;
    f.reply({ jsonrpc: '2.0', id: msg.id, result: { ran: runs } });
  });
  put(s.dir, `${T}001-r1.json`, reqText(1));
  assert.is((await replyFor(s.dir, 'r1')).error.code, -32600);
  assert.equal(ls(`${s.dir}/.state/answered`), [], 'the refusal is not the request_id\'s answer');
  rmSync(`${s.dir}/outbox`, { recursive: true });
  mkdirSync(`${s.dir}/outbox`);
  ready = true;
  put(s.dir, `${T}002-r1.json`, reqText(1));
  assert.equal((await replyFor(s.dir, 'r1')).result, { ran: 1 }, 'the plain retry runs');
  rmSync(`${s.dir}/outbox`, { recursive: true });
  mkdirSync(`${s.dir}/outbox`);
  put(s.dir, `${T}003-r1.json`, reqText(1));
  assert.equal((await replyFor(s.dir, 'r1')).result, { ran: 1 }, 'an executed result is kept: the next retry gets it');
  assert.is(runs, 1);
  await stop(s.t, s.dir);
});

test('a re-delivered request_id gets the stored reply and is not delivered again, across a restart', async () => {
  const s = setup();
  s.start();
  put(s.dir, `${T}001-r1.json`, reqText(1));
  assert.equal(await replyFor(s.dir, 'r1'), { jsonrpc: '2.0', id: 1, result: { method: 'm', params: { n: 1 } } });
  await s.t.close();
  rmSync(`${s.dir}/outbox`, { recursive: true });
  mkdirSync(`${s.dir}/outbox`);
  const s2 = setup({}, s.dir);
  s2.start();
  put(s.dir, `${T}002-r1.json`, reqText(1));
  assert.equal(await replyFor(s.dir, 'r1'), { jsonrpc: '2.0', id: 1, result: { method: 'm', params: { n: 1 } } });
  await until(() => ls(`${s.dir}/archive`).length === 2);
  assert.is(s2.frames.length, 0, 'not executed a second time');
  assert.equal(ls(`${s.dir}/archive`), [`${T}001-r1.json`, `${T}002-r1.json`]);
  await stop(s2.t, s.dir);
});

test('a duplicate arriving while the first copy runs waits for it and gets the same reply', async () => {
  const s = setup();
  const held: InboundFrame[] = [];
  s.start((f) => held.push(f));
  put(s.dir, `${T}001-r2.json`, reqText(5));
  await until(() => held.length === 1);
  put(s.dir, `${T}002-r2.json`, reqText(5));
  await tick(100);
  assert.is(held.length, 1);
  echo(held[0]);
  await until(() => ls(`${s.dir}/outbox`).length === 2, 3000);
  const replies = ls(`${s.dir}/outbox`).map((n) => JSON.parse(readFileSync(`${s.dir}/outbox/${n}`, 'utf8')));
  assert.equal(replies[0], replies[1]);
  await stop(s.t, s.dir);
});

test('a retry with other key order, spacing or reply_to is the same request (fingerprint of the message)', async () => {
  const s = setup();
  s.start();
  put(s.dir, `${T}001-k1.json`, '{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"b":2}}');
  await replyFor(s.dir, 'k1');
  put(s.dir, `${T}002-k1.json`, '{ "params": {"b":2, "a":1}, "method":"m", "id":1, "jsonrpc":"2.0", "reply_to":"other" }');
  assert.is((await replyFor(s.dir, 'k1', 'outbox/other')).id, 1);
  assert.is(s.frames.length, 1);
  await stop(s.t, s.dir);
});

test('a request_id reused for different content is refused (-32600) and set aside in rejected/', async () => {
  const s = setup();
  s.start();
  put(s.dir, `${T}001-r3.json`, reqText(1));
  await replyFor(s.dir, 'r3');
  rmSync(`${s.dir}/outbox`, { recursive: true });
  mkdirSync(`${s.dir}/outbox`);
  put(s.dir, `${T}002-r3.json`, reqText(1, { params: { n: 2 } }));
  const r = await replyFor(s.dir, 'r3');
  assert.is(r.error.code, -32600);
  assert.match(r.error.message, 'request_id r3 was already used for a different request');
  assert.is(s.frames.length, 1);
  await until(() => ls(`${s.dir}/rejected`).length === 1);
  assert.equal(ls(`${s.dir}/rejected`), [`${T}002-r3.json`]);
  await stop(s.t, s.dir);
});

test('a request claimed by a crashed run is answered "interrupted" at start-up, never run again', async () => {
  const dir = mkdtempSync(`${tmpdir()}/claw-fs-`);
  mkdirSync(`${dir}/.state/processing`, { recursive: true });
  writeFileSync(`${dir}/.state/processing/${T}001-r4.json`, reqText('x'));
  writeFileSync(`${dir}/.state/processing/${T}002-r5.json`, JSON.stringify({ jsonrpc: '2.0', method: 'note' }));
  const s = setup({}, dir);
  s.start();
  const r = await replyFor(dir, 'r4');
  assert.equal(r, {
    jsonrpc: '2.0',
    id: 'x',
    error: { code: -32603, message: 'Internal error: the runtime stopped while processing this request; it was not run again', data: { request_id: 'r4', reason: 'interrupted' } },
  });
  assert.is(s.frames.length, 0);
  await until(() => ls(`${dir}/archive`).length === 2);
  assert.equal(ls(`${dir}/.state/processing`), []);
  assert.equal(ls(`${dir}/archive`), [`${T}001-r4.json`, `${T}002-r5.json`]);
  assert.ok(!ls(`${dir}/outbox`).some((n) => n.includes('r5')), 'a notification gets no reply');
  // A later re-delivery of r4 gets the same stored answer.
  put(dir, `${T}003-r4.json`, reqText('x'));
  await until(() => ls(`${dir}/outbox`).filter((n) => n.endsWith('-r4.json')).length === 2, 3000);
  assert.is(s.frames.length, 0);
  await stop(s.t, dir);
});

test('a crash after the answer was stored but before the file moved: the stored reply is sent again, nothing runs', async () => {
  const dir = mkdtempSync(`${tmpdir()}/claw-fs-`);
  mkdirSync(`${dir}/.state/processing`, { recursive: true });
  mkdirSync(`${dir}/.state/answered`, { recursive: true });
  const text = reqText(9);
  writeFileSync(`${dir}/.state/processing/${T}001-r6.json`, text);
  const { createHash } = await import('node:crypto');
  const { canonicalJson } = await import('../../src/protocol/canonical-json.ts');
  const hash = createHash('sha256').update(canonicalJson(JSON.parse(text))).digest('hex');
  writeFileSync(`${dir}/.state/answered/r6.json`, JSON.stringify({ hash, reply: { jsonrpc: '2.0', id: 9, result: 'stored' } }));
  const s = setup({}, dir);
  s.start();
  assert.equal(await replyFor(dir, 'r6'), { jsonrpc: '2.0', id: 9, result: 'stored' });
  assert.is(s.frames.length, 0);
  await stop(s.t, dir);
});

test('a writer’s .tmp file is never read; a stale one is removed by the sweep', async () => {
  const s = setup({ tmp_max_age_ms: 60_000 });
  put(s.dir, `${T}001-r7.json.tmp`, '{"jsonrpc":"2.0","id":1,"meth');
  put(s.dir, `${T}002-r8.json.tmp`, '{"jsonrpc":"2.0","id":1,"meth');
  const past = (Date.now() - 120_000) / 1000;
  utimesSync(`${s.dir}/inbox/${T}001-r7.json.tmp`, past, past);
  s.start();
  put(s.dir, `${T}003-r9.json`, reqText(1));
  await replyFor(s.dir, 'r9');
  assert.is(s.frames.length, 1);
  assert.equal(readdirSync(`${s.dir}/inbox`), [`${T}002-r8.json.tmp`], 'the stale one is gone, the fresh one stays');
  await stop(s.t, s.dir);
});

test('malformed files: not JSON → -32700 and rejected/; bad name → rejected/ without reply; bad reply_to → -32600, not delivered', async () => {
  const { Router } = await import('../../src/kernel/router.ts');
  const { InflightTracker } = await import('../../src/kernel/inflight.ts');
  const s = setup();
  let calls = 0;
  const router = new Router({ dispatch: async () => (calls++, 'ok'), inflight: new InflightTracker(), log: s.log });
  s.t.start((f) => (s.frames.push(f), router.handle(f, 'fs')));
  put(s.dir, `${T}001-m1.json`, '{"jsonrpc":"2.0","id":1,');
  put(s.dir, 'notes.txt', 'hello');
  put(s.dir, `${T}002-m2.json`, reqText(2, { reply_to: '../etc' }));
  put(s.dir, `${T}003-m3.json`, reqText(3));
  const r1 = await replyFor(s.dir, 'm1');
  assert.is(r1.error.code, -32700);
  assert.is(r1.id, null);
  const r2 = await replyFor(s.dir, 'm2');
  assert.is(r2.error.code, -32600);
  assert.is(r2.id, 2);
  assert.equal(await replyFor(s.dir, 'm3'), { jsonrpc: '2.0', id: 3, result: 'ok' });
  assert.is(calls, 1, 'only the good request ran');
  await until(() => ls(`${s.dir}/rejected`).length === 3 && ls(`${s.dir}/archive`).length === 1);
  assert.equal(ls(`${s.dir}/rejected`), [`${T}001-m1.json`, `${T}002-m2.json`, 'notes.txt']);
  assert.equal(ls(`${s.dir}/archive`), [`${T}003-m3.json`]);
  await stop(s.t, s.dir);
});

test('a file nesting past 16,384 levels is refused unparsed (-32600, id null) in a bounded time; the next request runs', async () => {
  const { Router } = await import('../../src/kernel/router.ts');
  const { InflightTracker } = await import('../../src/kernel/inflight.ts');
  const dir = mkdtempSync(`${tmpdir()}/claw-fs-`);
  const log = captureLogger();
  // The default frame cap (4 MiB): the frame is read, not refused for its size.
  const t = createFsTransport({ dir, clock: systemClock, options: resolveFsOptions({ poll_interval_ms: 20, fsync: false }), log, maxFrameBytes: 4 * 1024 * 1024 });
  opened.push(t);
  const s = { dir, t };
  let calls = 0;
  const router = new Router({ dispatch: async () => (calls++, 'ok'), inflight: new InflightTracker(), log });
  t.start((f) => router.handle(f, 'fs'));
  const t0 = Date.now();
  put(s.dir, `${T}001-d1.json`, `{"jsonrpc":"2.0","id":1,"method":"echo","params":${'['.repeat(1_500_000)}${']'.repeat(1_500_000)}}`);
  put(s.dir, `${T}002-d2.json`, reqText(2));
  const r1 = await replyFor(s.dir, 'd1');
  assert.equal([r1.id, r1.error.code], [null, -32600]);
  assert.equal(await replyFor(s.dir, 'd2'), { jsonrpc: '2.0', id: 2, result: 'ok' });
  // Parsed, 1.5 M levels take ~2 s here, twice (transport and router).
  assert.ok(Date.now() - t0 < 1_500, `${Date.now() - t0} ms`);
  assert.is(calls, 1);
  await stop(s.t, s.dir);
});

test('reply_to names the reply directory outbox/{reply_to}/', async () => {
  const s = setup();
  s.start();
  put(s.dir, `${T}001-q1.json`, reqText(1, { reply_to: 'worker-2' }));
  assert.is((await replyFor(s.dir, 'q1', 'outbox/worker-2')).id, 1);
  await stop(s.t, s.dir);
});

test('file_mode: replies and notifications get exactly that mode (umask or not); the default is 0600', async () => {
  const { statSync } = await import('node:fs');
  for (const [opt, want] of [[{}, 0o600], [{ file_mode: '0664' }, 0o664]] as const) {
    const s = setup(opt);
    s.start();
    put(s.dir, `${T}001-p1.json`, reqText(1));
    await replyFor(s.dir, 'p1');
    s.t.notify({ jsonrpc: '2.0', method: 'claw.heartbeat' });
    const reply = ls(`${s.dir}/outbox`)[0];
    assert.is(statSync(`${s.dir}/outbox/${reply}`).mode & 0o777, want);
    assert.is(statSync(`${s.dir}/notifications/${ls(`${s.dir}/notifications`)[0]}`).mode & 0o777, want);
    await stop(s.t, s.dir);
  }
  assert.ok('error' in parseFsUri('fs:/a?file_mode=777x', '/'));
  assert.equal(parseFsUri('fs:/a?file_mode=0660', '/'), { dir: '/a', options: { file_mode: '0660' } });
});

test('fsync: true (power-loss mode) answers, stores and retires like the default', async () => {
  const s = setup({ fsync: true });
  s.start();
  put(s.dir, `${T}001-y1.json`, reqText(1));
  assert.equal(await replyFor(s.dir, 'y1'), { jsonrpc: '2.0', id: 1, result: { method: 'm', params: { n: 1 } } });
  await until(() => ls(`${s.dir}/archive`).length === 1);
  assert.equal(ls(`${s.dir}/.state/answered`), ['y1.json']);
  await stop(s.t, s.dir);
});

test('processed: delete leaves no request file behind', async () => {
  const s = setup({ processed: 'delete' });
  s.start();
  put(s.dir, `${T}001-d1.json`, reqText(1));
  await replyFor(s.dir, 'd1');
  await until(() => ls(`${s.dir}/.state/processing`).length === 0);
  assert.equal(ls(`${s.dir}/archive`), []);
  assert.equal(ls(`${s.dir}/inbox`), []);
  await stop(s.t, s.dir);
});

test('agent notifications go to notifications/; the sweep keeps the newest notifications_keep and honours retention', async () => {
  const s = setup({ notifications_keep: 2, retention_ms: 1000, dedup_retention_ms: 300_000 });
  s.start();
  for (let i = 0; i < 5; i++) s.t.notify({ jsonrpc: '2.0', method: 'claw.heartbeat', params: { i } });
  const notes = ls(`${s.dir}/notifications`);
  assert.is(notes.length, 5);
  mkdirSync(`${s.dir}/archive`, { recursive: true });
  writeFileSync(`${s.dir}/archive/old.json`, '{}');
  writeFileSync(`${s.dir}/archive/new.json`, '{}');
  // Transport-named files are aged by the timestamp in their name (no stat per file).
  const oldTs = String(BigInt(Date.now() - 600_000) * 1_000_000n).padStart(19, '0');
  const newTs = String(BigInt(Date.now()) * 1_000_000n).padStart(19, '0');
  writeFileSync(`${s.dir}/archive/${oldTs}-a.json`, '{}');
  writeFileSync(`${s.dir}/archive/${newTs}-b.json`, '{}');
  writeFileSync(`${s.dir}/.state/answered/old.json`, '{}');
  const past = (Date.now() - 600_000) / 1000;
  utimesSync(`${s.dir}/archive/old.json`, past, past);
  utimesSync(`${s.dir}/.state/answered/old.json`, past, past);
  sweep(s.dir, resolveFsOptions({ notifications_keep: 2, retention_ms: 1000, dedup_retention_ms: 300_000 }), (ms) => Date.now() - ms, s.log);
  assert.equal(ls(`${s.dir}/notifications`), notes.slice(3));
  assert.equal(JSON.parse(readFileSync(`${s.dir}/notifications/${notes[4]}`, 'utf8')).params, { i: 4 });
  assert.equal(ls(`${s.dir}/archive`), [`${newTs}-b.json`, 'new.json']);
  assert.equal(ls(`${s.dir}/.state/answered`), []);
  await stop(s.t, s.dir);
});

test('the inbox directory removed: the transport closes', async () => {
  const s = setup();
  s.start();
  rmSync(s.dir, { recursive: true, force: true });
  let closed = false;
  void s.t.closed.then(() => (closed = true));
  await until(() => closed, 3000);
  assert.ok(s.log.text().includes('inbox removed'));
});

// A real full disk: a small tmpfs as the transport's directory (root only; skipped where mount is not allowed).
const canMount = process.platform === 'linux' && process.getuid?.() === 0 && spawnSync('mount', ['--version']).status === 0;
(canMount ? test : test.skip)('a reply that cannot be stored (disk full) is stored and sent once space is back, run once, without a restart', async () => {
  const dir = mkdtempSync(`${tmpdir()}/claw-fs-full-`);
  if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', dir]).status !== 0) return rmSync(dir, { recursive: true, force: true });
  try {
    const s = setup({}, dir);
    let runs = 0;
    s.start((f) => {
      runs++;
      // The work fills the disk before its answer is stored.
      try {
        writeFileSync(`${dir}/filler`, Buffer.alloc(1024 * 1024));
      } catch {
        // ENOSPC: the filler took what was left
      }
      const msg = JSON.parse((f.payload as { text: string }).text);
      f.reply({ jsonrpc: '2.0', id: msg.id, result: { ran: runs } });
    });
    put(dir, `${T}001-r1.json`, reqText(1));
    await until(() => s.log.entries.some((e) => e.msg === 'fs transport: cannot store reply'), 3000);
    assert.equal(ls(`${dir}/outbox`), [], 'nothing sent while the disk is full');
    assert.equal(ls(`${dir}/.state/processing`), [`${T}001-r1.json`], 'the request waits in processing/');
    rmSync(`${dir}/filler`);
    const reply = await replyFor(dir, 'r1');
    assert.equal(reply.result, { ran: 1 });
    assert.is(runs, 1);
    await until(() => ls(`${dir}/.state/processing`).length === 0, 3000);
    assert.ok(s.log.entries.some((e) => e.msg === 'fs transport: reply stored'));
    await s.t.close();
  } finally {
    spawnSync('umount', [dir]);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a reply that still cannot be stored at close stays in processing/ and close() does not wait for the disk', async () => {
  const s = setup();
  s.start((f) => {
    const msg = JSON.parse((f.payload as { text: string }).text);
    // answered/ is a file: the record cannot be written, however often it is tried.
    rmSync(`${s.dir}/.state/answered`, { recursive: true, force: true });
    writeFileSync(`${s.dir}/.state/answered`, '');
    f.reply({ jsonrpc: '2.0', id: msg.id, result: { ok: true } });
  });
  put(s.dir, `${T}001-r2.json`, reqText(2));
  await until(() => s.log.entries.some((e) => e.msg === 'fs transport: cannot store reply'), 3000);
  const t0 = Date.now();
  await s.t.close();
  assert.ok(Date.now() - t0 < 1000, 'close() returned without waiting for a retry');
  assert.equal(ls(`${s.dir}/.state/processing`), [`${T}001-r2.json`], 'left for a restart to answer as interrupted');
  rmSync(s.dir, { recursive: true, force: true });
});

test.run();
