// The MQTT request journal on a full disk (src/transports/mqtt/journal.ts, docs/transports.md "The journal"): an
// append writes its whole line or nothing, so a record after the failure is never glued to a torn one and lost
// with it; a rewrite that fails at start or at compaction leaves the existing journal in use (no temp file left)
// and the agent starts; a reply is published even when its "done" record cannot be written; errors name the file.
// ENOSPC and short writes come from an injected fs (JournalFs) over real files, no tiny filesystem needed.
//
// Then the catch-up: a reply's `done` that could not be written is kept and written again (the transport's retry
// timer, the next append, a rewrite, close), so once space is back a crash no longer answers that request
// `interrupted` although its reply went out; a crash before space is back still does, exactly once (the
// documented window). A real full disk there: a 256 KiB tmpfs (root only; skipped where mounting is not allowed).
// A crash is what a SIGKILL leaves on disk: the journal's appends are synchronous writes, so a copy of the file
// taken at that moment is the next start's journal; the crashed process (closed after the copy) never touches it.
// (In this file rather than one of its own: each file using the mosquitto helper adds a process exit listener.)
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as fs from 'node:fs';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InboundFrame } from '../../src/kernel/ports.ts';
import type { ClawError } from '../../src/protocol/errors.ts';
import { createFileJournal, type JournalFs, type RequestJournal } from '../../src/transports/mqtt/journal.ts';
import { createMqttTransport } from '../../src/transports/mqtt/transport.ts';
import { connectMqttClient } from '../../src/transports/mqtt/client-mqtt.ts';
import { parseMqttUrl } from '../../src/transports/mqtt/endpoint.ts';
import { resolveMqttSettings } from '../../src/transports/mqtt/options.ts';
import { findMosquitto, startMosquitto, type Mosquitto } from '../helpers/mosquitto.ts';
import { captureLogger, until } from './helpers/fakes.ts';

const HAVE = findMosquitto() !== undefined;
if (!HAVE) console.log('SKIP mqtt-journal-enospc (broker cases): mosquitto not found');
const when = (c: boolean) => (c ? test : test.skip);
let broker: Mosquitto | undefined;
test.after(async () => {
  await broker?.stop();
});

const enospc = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });

/** node:fs with a byte budget: a write past it is cut short (as a filesystem does), the next one fails ENOSPC. */
function fullDisk() {
  const ctl = {
    /** Bytes that may still be written; Infinity = plenty of space. */
    space: Infinity,
    /** ftruncate fails too (EIO). */
    truncateFails: false,
    /** Opening a `.tmp` file fails (ENOSPC): rewrites fail while appends may work. */
    tmpFails: false,
    writes: 0,
  };
  const fake: JournalFs = {
    openSync: (p, flags) => {
      if (ctl.tmpFails && p.endsWith('.tmp')) throw enospc();
      return fs.openSync(p, flags);
    },
    closeSync: (fd) => fs.closeSync(fd),
    writeSync: (fd, buf, off, len, pos) => {
      ctl.writes++;
      if (ctl.space <= 0) throw enospc();
      const n = Math.min(len, ctl.space);
      ctl.space -= n;
      return fs.writeSync(fd, buf, off, n, pos);
    },
    fsyncSync: (fd) => fs.fsyncSync(fd),
    ftruncateSync: (fd, len) => {
      if (ctl.truncateFails) throw Object.assign(new Error('EIO: i/o error, ftruncate'), { code: 'EIO' });
      fs.ftruncateSync(fd, len);
    },
    readFileSync: (p) => fs.readFileSync(p),
    renameSync: (a, b) => fs.renameSync(a, b),
    unlinkSync: (p) => fs.unlinkSync(p),
    existsSync: (p) => fs.existsSync(p),
    mkdirSync: (p, o) => fs.mkdirSync(p, o),
  };
  return { ctl, fs: fake };
}

const req = (text: string, requestId?: string) => ({ text, requestId, replyTo: 'r/t', style: 'properties' as const });
const opts = (extra: Partial<Parameters<typeof createFileJournal>[2]> = {}) => ({ windowMs: 300_000, now: () => 1_000, ...extra });
const setup = (client = 'claw-s-a') => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-mqtt-journal-enospc-'));
  return { dir, file: join(dir, 'mqtt', `${client}.journal`) };
};
/** What a restart sees (real fs). */
const reload = (dir: string, client = 'claw-s-a') => {
  const j = createFileJournal(dir, client, opts());
  const r = j.load(1_000, 300_000);
  j.close();
  return { pending: r.pending.map((p) => p.k), done: r.done.map((d) => d.k) };
};
const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean);

test('a short write then ENOSPC leaves no torn line: the error names the file, the next record is not glued to it', () => {
  const { dir, file } = setup();
  const d = fullDisk();
  const j = createFileJournal(dir, 'claw-s-a', opts({ fs: d.fs }));
  j.load(1_000, 300_000);
  j.request({ k: 'r1', at: 1_000, req: req('{"id":1}', 'r1') });
  const before = readFileSync(file);
  // A record of 10 kB; 4096 bytes fit on the disk.
  d.ctl.space = 4096;
  const big = req(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'm', params: { x: 'y'.repeat(10_000) } }), 'r2');
  try {
    j.request({ k: 'r2', at: 1_000, req: big });
    assert.unreachable('the append must fail');
  } catch (e) {
    assert.instance(e, Error);
    assert.equal((e as ClawError).code, 'mqtt.journal_write');
    assert.ok((e as Error).message.includes(file), 'the error names the journal file');
    assert.match((e as Error).message, /ENOSPC/);
  }
  assert.equal(readFileSync(file), before, 'the partial record was cut back off');
  assert.equal(reload(dir), { pending: ['r1'], done: [] });

  // Space is freed: the next record lands on a line of its own, and the one that failed (kept in memory) is
  // written out by the rewrite that follows.
  d.ctl.space = Infinity;
  j.request({ k: 'r3', at: 1_000, req: req('{"id":3}', 'r3') });
  for (const l of lines(file)) JSON.parse(l); // every line parses
  assert.equal(reload(dir), { pending: ['r1', 'r2', 'r3'], done: [] });
  j.close();
});

test('partial writes are continued until the whole record is written', () => {
  const { dir, file } = setup();
  const d = fullDisk();
  const j = createFileJournal(dir, 'claw-s-a', opts({ fs: d.fs }));
  j.load(1_000, 300_000);
  // A disk that takes at most 7 bytes per write call.
  const raw = d.fs.writeSync;
  d.fs.writeSync = (fd, buf, off, len, pos) => raw(fd, buf, off, Math.min(len, 7), pos);
  j.request({ k: 'r1', at: 1_000, req: req('{"id":1,"method":"a-longer-method-name"}', 'r1') });
  j.done({ k: 'r1', at: 1_000, replies: ['{"id":1,"result":"ok"}'] });
  assert.equal(lines(file).map((l) => JSON.parse(l).t), ['req', 'done']);
  assert.equal(reload(dir), { pending: [], done: ['r1'] });
  j.close();
});

test('when the torn tail cannot be cut off either, the next record starts on a new line, and the failed one is written again after it', () => {
  const { dir, file } = setup();
  const d = fullDisk();
  const j = createFileJournal(dir, 'claw-s-a', opts({ fs: d.fs }));
  const warnings: ClawError[] = [];
  j.load(1_000, 300_000, (w) => warnings.push(w));
  j.request({ k: 'r1', at: 1_000, req: req('{"id":1}', 'r1') });
  d.ctl.space = 20;
  d.ctl.truncateFails = true;
  d.ctl.tmpFails = true; // and no rewrite can repair it
  assert.throws(() => j.request({ k: 'r2', at: 1_000, req: req('{"id":2}', 'r2') }), (e: Error) => e.message.includes(file));
  assert.ok(readFileSync(file, 'utf8').length > lines(file)[0].length + 1, 'the fragment is still there');
  d.ctl.space = Infinity;
  j.done({ k: 'r1', at: 1_000, replies: ['{"id":1,"result":1}'] });
  j.request({ k: 'r3', at: 1_000, req: req('{"id":3}', 'r3') });
  // Only the fragment's line is unreadable; r2, kept as unwritten, went out after the first append that worked.
  assert.equal(reload(dir), { pending: ['r2', 'r3'], done: ['r1'] });
  assert.equal(j.unwritten(), { keys: [], overflow: false });
  // The rewrite after the failure was tried and reported, naming the file; no temp file is left.
  assert.ok(warnings.length >= 1 && warnings.every((w) => w.message.includes(file)));
  assert.not.ok(existsSync(`${file}.tmp`));
  j.close();
});

test('disk full at start: load keeps the existing journal (no temp file left), warns naming it, appends go on in it', () => {
  const { dir, file } = setup();
  mkdirSync(join(dir, 'mqtt'));
  // The previous run: r1 answered, r2 acknowledged and not answered, then a crash mid-append (torn last line).
  const prev = [
    JSON.stringify({ t: 'req', k: 'r1', at: 1_000, req: req('{"id":1}', 'r1') }),
    JSON.stringify({ t: 'done', k: 'r1', at: 1_000, replies: ['{"id":1,"result":1}'] }),
    JSON.stringify({ t: 'req', k: 'r2', at: 1_000, req: req('{"id":2}', 'r2') }),
  ];
  writeFileSync(file, `${prev.join('\n')}\n{"t":"req","k":"torn","at`);
  const d = fullDisk();
  d.ctl.space = 0;
  const warnings: ClawError[] = [];
  const j = createFileJournal(dir, 'claw-s-a', opts({ fs: d.fs }));
  const loaded = j.load(1_000, 300_000, (w) => warnings.push(w));
  assert.equal(loaded.pending.map((p) => p.k), ['r2']);
  assert.equal(loaded.done.map((x) => x.k), ['r1']);
  assert.equal(warnings.length, 1);
  assert.equal(warnings[0].code, 'mqtt.journal_rewrite');
  assert.ok(warnings[0].message.includes(file), 'the warning names the journal file');
  assert.match(warnings[0].message, /existing file stays in use.*ENOSPC/);
  assert.not.ok(existsSync(`${file}.tmp`), 'the temp file is removed');
  assert.equal(readFileSync(file, 'utf8').split('\n').slice(0, 3), prev, 'the existing journal is untouched');

  // Space again: appends go to the existing file, the torn tail cut off first.
  d.ctl.space = Infinity;
  j.done({ k: 'r2', at: 1_000, replies: ['{"id":2,"error":"interrupted"}'] });
  j.request({ k: 'r3', at: 1_000, req: req('{"id":3}', 'r3') });
  for (const l of lines(file)) JSON.parse(l);
  assert.equal(lines(file).length, 5);
  assert.equal(reload(dir), { pending: ['r3'], done: ['r1', 'r2'] });
  j.close();
});

test('disk full at the first start: an empty journal is still created, the append that fails names the file', () => {
  const { dir, file } = setup();
  const d = fullDisk();
  d.ctl.space = 0;
  const warnings: ClawError[] = [];
  const j = createFileJournal(dir, 'claw-s-a', opts({ fs: d.fs }));
  assert.equal(j.load(1_000, 300_000, (w) => warnings.push(w)), { pending: [], done: [] });
  assert.equal(warnings, []);
  assert.throws(() => j.request({ k: 'r1', at: 1_000, req: req('{"id":1}', 'r1') }), (e: Error) => e.message.includes(file) && /ENOSPC/.test(e.message));
  assert.equal(readFileSync(file, 'utf8'), '');
  d.ctl.space = Infinity;
  j.request({ k: 'r2', at: 1_000, req: req('{"id":2}', 'r2') });
  assert.equal(reload(dir), { pending: ['r1', 'r2'], done: [] });
  j.close();
});

test('no journal can be created at the first start: load warns, appends fail naming the file, and work once it can be', () => {
  const { dir, file } = setup();
  const d = fullDisk();
  d.ctl.space = 0;
  d.ctl.tmpFails = true;
  const warnings: ClawError[] = [];
  const j = createFileJournal(dir, 'claw-s-a', opts({ fs: d.fs }));
  assert.equal(j.load(1_000, 300_000, (w) => warnings.push(w)), { pending: [], done: [] });
  assert.equal(warnings.length, 1);
  assert.ok(warnings[0].message.includes(file));
  assert.match(warnings[0].message, /not journaled until it can be written/);
  assert.not.ok(existsSync(`${file}.tmp`));
  assert.throws(() => j.request({ k: 'r1', at: 1_000, req: req('{"id":1}', 'r1') }), (e: Error) => e.message.includes(file) && /ENOSPC/.test(e.message));
  assert.not.ok(existsSync(file));
  d.ctl.space = Infinity;
  d.ctl.tmpFails = false;
  j.request({ k: 'r2', at: 1_000, req: req('{"id":2}', 'r2') });
  assert.equal(reload(dir), { pending: ['r1', 'r2'], done: [] });
  j.close();
});

test('a compaction that fails keeps the existing journal and is reported, not thrown; the record is already in', () => {
  const { dir, file } = setup();
  const d = fullDisk();
  const warnings: ClawError[] = [];
  const j = createFileJournal(dir, 'claw-s-a', opts({ fs: d.fs, compactEvery: 2 }));
  j.load(1_000, 300_000, (w) => warnings.push(w));
  j.request({ k: 'r1', at: 1_000, req: req('{"id":1}', 'r1') });
  d.ctl.tmpFails = true;
  j.done({ k: 'r1', at: 1_000, replies: ['{"id":1,"result":1}'] }); // the second append: compaction due, fails
  assert.equal(warnings.length, 1);
  assert.ok(warnings[0].message.includes(file));
  assert.not.ok(existsSync(`${file}.tmp`));
  assert.equal(reload(dir), { pending: [], done: ['r1'] });
  j.close();
});

when(HAVE)('disk full: the agent starts on its old journal, answers the interrupted request and new ones; failures are logged naming the file', async () => {
  broker ??= await startMosquitto();
  const url = broker.url('/jfull/agent');
  const settings = resolveMqttSettings(parseMqttUrl(url));
  const { dir, file } = setup('claw-jfull-agent');
  mkdirSync(join(dir, 'mqtt'));
  writeFileSync(file, `${JSON.stringify({ t: 'req', k: 'held-1', at: Date.now(), req: { text: '{"jsonrpc":"2.0","id":7,"method":"slow"}', requestId: 'held-1', style: 'properties' } })}\n`);
  const d = fullDisk();
  d.ctl.space = 0;
  const log = captureLogger();
  const journal = createFileJournal(dir, 'claw-jfull-agent', { windowMs: 300_000, now: Date.now, fs: d.fs });
  const c = await connectMqttClient(url, { baseDir: '/' });
  let t: Awaited<ReturnType<typeof createMqttTransport>> | undefined;
  try {
    t = await createMqttTransport({ settings, log, journal });
    await t.ready(5000);
    t.start((f: InboundFrame) => {
      const m = JSON.parse((f.payload as { text: string }).text);
      f.reply({ jsonrpc: '2.0', id: m.id, result: `ran ${m.method}` });
    });
    assert.equal(await c.request({ jsonrpc: '2.0', id: 1, method: 'quick' }, { requestId: 'q-1', timeoutMs: 3000 }), { jsonrpc: '2.0', id: 1, result: 'ran quick' });
    const held = (await c.request({ jsonrpc: '2.0', id: 7, method: 'slow' }, { requestId: 'held-1', timeoutMs: 3000 })) as { error?: { data?: { reason?: string } } };
    assert.equal(held.error?.data?.reason, 'interrupted');
    const text = log.text();
    assert.match(text, /mqtt request journal/);
    assert.ok(log.entries.some((e) => e.level === 'warn' && e.fields?.journal === file && /rewrite failed/.test(String(e.fields?.error))), 'the failed rewrite at start is logged with the file');
    assert.ok(log.entries.some((e) => e.level === 'error' && /reply published without a stored copy/.test(e.msg) && e.fields?.journal === file && /ENOSPC/.test(String(e.fields?.error))));
    assert.not.ok(existsSync(`${file}.tmp`));
    assert.not.match(text, /ran quick/, 'reply text is not logged');
  } finally {
    await t?.close();
    await c.close();
  }
});

when(HAVE)('a reply is published even when recording it as done throws', async () => {
  broker ??= await startMosquitto();
  const url = broker.url('/jdone/agent');
  const settings = resolveMqttSettings(parseMqttUrl(url));
  const requests: string[] = [];
  const journal: RequestJournal = {
    file: '/data/mqtt/claw-jdone-agent.journal',
    load: () => ({ pending: [], done: [] }),
    request: (r) => void requests.push(r.k),
    done: () => {
      throw new Error('request journal /data/mqtt/claw-jdone-agent.journal: record not written: ENOSPC: no space left on device, write');
    },
    flush: () => {},
    unwritten: () => ({ keys: [], overflow: false }),
    close: () => {},
  };
  const log = captureLogger();
  const c = await connectMqttClient(url, { baseDir: '/' });
  let t: Awaited<ReturnType<typeof createMqttTransport>> | undefined;
  try {
    t = await createMqttTransport({ settings, log, journal });
    await t.ready(5000);
    t.start((f: InboundFrame) => {
      const m = JSON.parse((f.payload as { text: string }).text);
      f.reply({ jsonrpc: '2.0', id: m.id, result: 'the tool ran' });
    });
    assert.equal(await c.request({ jsonrpc: '2.0', id: 1, method: 'tool' }, { requestId: 'd-1', timeoutMs: 3000 }), { jsonrpc: '2.0', id: 1, result: 'the tool ran' });
    await until(() => log.entries.some((e) => e.level === 'error'), 1000);
    const e = log.entries.find((x) => x.level === 'error')!;
    assert.match(e.msg, /reply published without a stored copy/);
    assert.equal(e.fields?.journal, '/data/mqtt/claw-jdone-agent.journal');
    assert.equal(e.fields?.request_id, 'd-1');
    assert.equal(requests, ['d-1']);
  } finally {
    await t?.close();
    await c.close();
  }
});

test('an unwritten record that keeps failing does not make every later append try (and warn about) a full rewrite', () => {
  const { dir } = setup();
  const d = fullDisk();
  // A disk with room for small records only: the big reply never fits, nor does any rewrite.
  const raw = d.fs.writeSync;
  d.fs.writeSync = (fd, buf, off, len, pos) => {
    if (len > 1000) throw enospc();
    return raw(fd, buf, off, len, pos);
  };
  const warnings: ClawError[] = [];
  const j = createFileJournal(dir, 'claw-s-a', opts({ fs: d.fs }));
  j.load(1_000, 300_000, (w) => warnings.push(w));
  d.ctl.tmpFails = true;
  j.request({ k: 'r1', at: 1_000, req: req('{"id":1}', 'r1') });
  assert.throws(() => j.done({ k: 'r1', at: 1_000, replies: ['x'.repeat(2000)] }));
  for (let i = 2; i <= 5; i++) j.request({ k: `r${i}`, at: 1_000, req: req(`{"id":${i}}`, `r${i}`) });
  assert.equal(j.unwritten().keys, ['r1'], 'still waiting for space');
  assert.is(warnings.length, 1, `one rewrite tried after the failure, not one per append: ${warnings.length}`);
  assert.equal(reload(dir), { pending: ['r1', 'r2', 'r3', 'r4', 'r5'], done: [] });
  j.close();
});

// ---- catch-up after a full disk (a real tmpfs) ----

const canMount = process.platform === 'linux' && process.getuid?.() === 0 && spawnSync('mount', ['--version']).status === 0;
if (!canMount) console.log('SKIP mqtt-journal-enospc (catch-up cases): a tmpfs can only be mounted as root on Linux');

/** A 256 KiB tmpfs; undefined where mounting fails. */
function smallDisk(): string | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'claw-mqtt-catchup-'));
  if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', dir]).status === 0) return dir;
  rmSync(dir, { recursive: true, force: true });
  return undefined;
}
const unmount = (dir: string) => {
  // Lazily, should a failed assertion have left a journal open on it.
  if (spawnSync('umount', [dir]).status !== 0) spawnSync('umount', ['-l', dir]);
  rmSync(dir, { recursive: true, force: true });
};
const fill = (dir: string) => {
  try {
    writeFileSync(join(dir, 'filler'), Buffer.alloc(1024 * 1024));
  } catch {
    // ENOSPC: the filler took what was left
  }
};
// Larger than a page: an append within the journal's last page needs no new block, even on a full tmpfs.
const BIG = 'x'.repeat(8192);
const records = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .flatMap((l) => {
      try {
        const r = JSON.parse(l) as { t: string; k: string };
        return [`${r.t}:${r.k}`];
      } catch {
        return [];
      }
    });
/** What a SIGKILL now leaves for the next start: the journal as it is on disk, in a directory with space. */
const crashCopy = (file: string, client: string) => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-mqtt-crashed-'));
  mkdirSync(join(dir, 'mqtt'));
  copyFileSync(file, join(dir, 'mqtt', `${client}.journal`));
  return dir;
};

test('journal: a done that fails on a full disk is kept, flush() fails while full, and lands once space is back', () => {
  if (!canMount) return;
  const disk = smallDisk();
  if (!disk) return console.log('  (mount failed: skipped)');
  try {
    const j = createFileJournal(disk, 'claw-s-a', { windowMs: 300_000, now: () => 1_000 });
    j.load(1_000, 300_000);
    const file = join(disk, 'mqtt', 'claw-s-a.journal');
    j.request({ k: 'r1', at: 1_000, req: { text: '{"id":1}', requestId: 'r1', replyTo: 'r/t', style: 'properties' } });
    fill(disk);
    assert.throws(() => j.done({ k: 'r1', at: 1_000, replies: [`{"id":1,"result":"${BIG}"}`] }), (e: Error) => /ENOSPC/.test(e.message) && e.message.includes(file));
    assert.equal(records(file), ['req:r1'], 'the file still says r1 is open');
    assert.equal(j.unwritten(), { keys: ['r1'], overflow: false });
    assert.throws(() => j.flush(), (e: Error) => /ENOSPC/.test(e.message));
    assert.equal(j.unwritten().keys, ['r1'], 'still kept after a failed retry');
    rmSync(join(disk, 'filler'));
    j.flush();
    assert.equal(records(file), ['req:r1', 'done:r1']);
    assert.equal(j.unwritten(), { keys: [], overflow: false });
    j.close();
    const again = createFileJournal(disk, 'claw-s-a', { windowMs: 300_000, now: () => 1_000 });
    const loaded = again.load(1_000, 300_000);
    assert.equal(loaded.pending, [], 'a restart finds nothing open');
    assert.equal(loaded.done.map((d) => d.replies), [[`{"id":1,"result":"${BIG}"}`]]);
    again.close();
  } finally {
    unmount(disk);
  }
});

test('journal: unwritten records go out with the next append that works; a done supersedes its unwritten request, never followed by it', () => {
  if (!canMount) return;
  const disk = smallDisk();
  if (!disk) return;
  try {
    const j = createFileJournal(disk, 'claw-s-a', { windowMs: 300_000, now: () => 1_000 });
    j.load(1_000, 300_000);
    const file = join(disk, 'mqtt', 'claw-s-a.journal');
    const r = (k: string) => ({ k, at: 1_000, req: { text: '{"id":1}', requestId: k, replyTo: 'r/t', style: 'properties' as const } });
    j.request(r('r1'));
    fill(disk);
    assert.throws(() => j.request({ ...r('r2'), req: { ...r('r2').req, text: BIG } }));
    assert.throws(() => j.done({ k: 'r1', at: 1_000, replies: [BIG] }));
    assert.throws(() => j.done({ k: 'r2', at: 1_000, replies: [BIG] })); // supersedes r2's unwritten request
    assert.equal(j.unwritten().keys, ['r1', 'r2']);
    rmSync(join(disk, 'filler'));
    j.request(r('r3'));
    assert.equal(j.unwritten().keys, []);
    // r2's request record is never written after its done (which would reopen it at the next start).
    assert.equal(records(file).slice(-3).sort(), ['done:r1', 'done:r2', 'req:r3']);
    const again = createFileJournal(disk, 'claw-s-a', { windowMs: 300_000, now: () => 1_000 });
    assert.equal(again.load(1_000, 300_000).pending.map((p) => p.k), ['r3']);
    again.close();
    j.close();
  } finally {
    unmount(disk);
  }
});

(HAVE && canMount ? test : test.skip)('agent: the reply\'s done fails on a full disk, the retry lands once space is back, a crash after that is not answered interrupted', async () => {
  const disk = smallDisk();
  if (!disk) return;
  broker ??= await startMosquitto();
  const client = 'claw-jcatch-agent';
  const url = broker.url('/jcatch/agent');
  const settings = resolveMqttSettings(parseMqttUrl(url));
  const file = join(disk, 'mqtt', `${client}.journal`);
  const runs: string[] = [];
  const c = await connectMqttClient(url, { baseDir: '/' });
  let a: Awaited<ReturnType<typeof createMqttTransport>> | undefined;
  let b: Awaited<ReturnType<typeof createMqttTransport>> | undefined;
  let crashed: string | undefined;
  try {
    const logA = captureLogger();
    a = await createMqttTransport({ settings, log: logA, journal: createFileJournal(disk, client, { windowMs: 300_000, now: Date.now }) });
    await a.ready(5000);
    a.start((f: InboundFrame) => {
      const m = JSON.parse((f.payload as { text: string }).text);
      runs.push(`a:${m.method}`);
      fill(disk); // the work fills the disk before its reply is stored
      f.reply({ jsonrpc: '2.0', id: m.id, result: { text: 'the tool ran', padding: BIG } });
    });
    const reply = await c.request({ jsonrpc: '2.0', id: 1, method: 'tool' }, { requestId: 'c-1', timeoutMs: 3000 });
    assert.equal(reply, { jsonrpc: '2.0', id: 1, result: { text: 'the tool ran', padding: BIG } }, 'published although not stored');
    assert.ok(logA.entries.some((e) => e.level === 'error' && /reply published without a stored copy/.test(e.msg) && /ENOSPC/.test(String(e.fields?.error))));
    assert.equal(records(file), ['req:c-1'], 'the file says c-1 is open');
    rmSync(join(disk, 'filler'));
    // The retry timer (2 s) writes the done: no new traffic needed.
    await until(() => records(file).includes('done:c-1'), 6000).catch(() => {});
    assert.equal(records(file), ['req:c-1', 'done:c-1'], 'the done landed once space was back');
    assert.ok(logA.entries.some((e) => e.msg === 'mqtt request journal caught up' && e.fields?.journal === file));

    crashed = crashCopy(file, client); // SIGKILL now
    await a.close();
    a = undefined;
    const logB = captureLogger();
    b = await createMqttTransport({ settings, log: logB, journal: createFileJournal(crashed, client, { windowMs: 300_000, now: Date.now }) });
    await b.ready(5000);
    b.start((f: InboundFrame) => {
      const m = JSON.parse((f.payload as { text: string }).text);
      runs.push(`b:${m.method}`);
      f.reply({ jsonrpc: '2.0', id: m.id, result: 'ran again' });
    });
    assert.equal(await c.request({ jsonrpc: '2.0', id: 1, method: 'tool' }, { requestId: 'c-1', timeoutMs: 3000 }), reply, 'a retry gets the real reply, not interrupted');
    assert.not.match(logB.text(), /answered as interrupted/, 'the restart answers nothing interrupted');
    assert.equal(runs, ['a:tool'], 'ran once');
  } finally {
    await b?.close();
    await a?.close();
    await c.close();
    unmount(disk);
    if (crashed) rmSync(crashed, { recursive: true, force: true });
  }
});

(HAVE && canMount ? test : test.skip)('agent: a crash before space is back answers the request interrupted, exactly once over later restarts; close names what stayed unwritten', async () => {
  const disk = smallDisk();
  if (!disk) return;
  broker ??= await startMosquitto();
  const client = 'claw-jwindow-agent';
  const url = broker.url('/jwindow/agent');
  const settings = resolveMqttSettings(parseMqttUrl(url));
  const file = join(disk, 'mqtt', `${client}.journal`);
  const runs: string[] = [];
  const c = await connectMqttClient(url, { baseDir: '/' });
  const open: Awaited<ReturnType<typeof createMqttTransport>>[] = [];
  const dirs: string[] = [];
  const handler = (name: string) => (f: InboundFrame) => {
    const m = JSON.parse((f.payload as { text: string }).text);
    runs.push(`${name}:${m.method}`);
    f.reply({ jsonrpc: '2.0', id: m.id, result: { text: `${name} ran it`, padding: BIG } });
  };
  try {
    const logA = captureLogger();
    const a = await createMqttTransport({ settings, log: logA, journal: createFileJournal(disk, client, { windowMs: 300_000, now: Date.now }) });
    open.push(a);
    await a.ready(5000);
    a.start((f) => {
      fill(disk);
      handler('a')(f);
    });
    assert.equal(await c.request({ jsonrpc: '2.0', id: 1, method: 'tool' }, { requestId: 'w-1', timeoutMs: 3000 }), { jsonrpc: '2.0', id: 1, result: { text: 'a ran it', padding: BIG } });
    assert.equal(records(file), ['req:w-1']);
    const crashed = crashCopy(file, client); // SIGKILL while the disk is still full
    dirs.push(crashed);
    await a.close(); // (the crashed process: its close is not the next start's concern, but it says what it left)
    open.length = 0;
    const atClose = logA.entries.find((e) => e.msg.startsWith('mqtt request journal records unwritten at close'));
    assert.ok(atClose, 'close names what is still unwritten');
    assert.equal(atClose!.fields?.request_ids, ['w-1']);
    assert.equal(atClose!.fields?.journal, file);

    // The next start: w-1 is open in the journal, so it is answered interrupted (the documented window).
    const logB = captureLogger();
    const b = await createMqttTransport({ settings, log: logB, journal: createFileJournal(crashed, client, { windowMs: 300_000, now: Date.now }) });
    open.push(b);
    await b.ready(5000);
    b.start(handler('b'));
    const interrupted = (await c.request({ jsonrpc: '2.0', id: 1, method: 'tool' }, { requestId: 'w-1', timeoutMs: 3000 })) as { error?: { data?: { reason?: string } } };
    assert.equal(interrupted.error?.data?.reason, 'interrupted');
    assert.equal(logB.entries.filter((e) => /answered as interrupted/.test(e.msg)).map((e) => e.fields?.count), [1]);

    // And only once: that answer is journaled, so a crash and another start answer nothing interrupted again.
    const again = crashCopy(join(crashed, 'mqtt', `${client}.journal`), client);
    dirs.push(again);
    await b.close();
    open.length = 0;
    const logC = captureLogger();
    const cc = await createMqttTransport({ settings, log: logC, journal: createFileJournal(again, client, { windowMs: 300_000, now: Date.now }) });
    open.push(cc);
    await cc.ready(5000);
    cc.start(handler('c'));
    assert.equal(await c.request({ jsonrpc: '2.0', id: 1, method: 'tool' }, { requestId: 'w-1', timeoutMs: 3000 }), interrupted, 'the same stored answer');
    assert.not.match(logC.text(), /answered as interrupted/);
    assert.equal(runs, ['a:tool'], 'never run again');
  } finally {
    for (const t of open) await t.close();
    await c.close();
    unmount(disk);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
});

test.run();
