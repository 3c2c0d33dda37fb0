// The audit outage record (src/audit/outage.ts, log.ts; docs/audit.md "Outage record"): calls
// refused while the log cannot write (-32011 audit:write_failed) are counted, and the account is
// written as an `audit.outage` record in the chain before the first record that succeeds again —
// or at a clean close, or warned as lost. On a real full tmpfs (root only), and with the failure
// injected around the real file (everywhere).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditLog, type AuditFile } from '../../src/audit/log.ts';
import { openAuditFile } from '../../src/audit/node-file.ts';
import { chainRecord } from '../../src/audit/record.ts';
import { verifyAuditText } from '../../src/audit/verify.ts';
import { verifyAuditSegments } from '../../src/audit/segments.ts';
import { nodeAuditSegments, readAuditDirectory } from '../../src/audit/node-segments.ts';
import { openAuditSession } from '../../src/audit/session.ts';
import { syslogSeverity } from '../../src/audit/sink-syslog.ts';
import { openDatabase } from '../../src/memory/sqlite/open.ts';
import { ErrorCode } from '../../src/protocol/errors.ts';
import { runGates } from '../../src/gates/pipeline.ts';
import { compileArgumentSchema } from '../../src/tools/json-schema.ts';
import { validateOutput } from '../../src/femtoclaw/validate.ts';
import { boundTool, fakeImpl, makeCall, makeDeps, ok, settle } from './helpers/gate-fakes.ts';

const root = mkdtempSync(join(tmpdir(), 'claw-audit-outage-'));
let n = 0;
const T0 = Date.UTC(2026, 10, 22);
const SECRET = 'hunter22';
const ARG = 'an-argument-value-7f3a';

const fresh = () => {
  const dir = join(root, `d${n++}`);
  mkdirSync(dir, { recursive: true });
  return join(dir, 'audit.jsonl');
};
const records = (path: string) => readFileSync(path, 'utf8').split('\n').slice(0, -1).map((l) => JSON.parse(l));

/** The real file; `full` makes every append write half its line and fail as a full disk does. */
function failing(path: string) {
  const f = openAuditFile(path);
  const mode = { full: false, errno: 'ENOSPC' };
  const file: AuditFile = {
    ...f,
    path,
    append(line) {
      if (!mode.full) return f.append(line);
      const fd = openSync(path, 'a');
      writeSync(fd, line.slice(0, Math.floor(line.length / 2)));
      closeSync(fd);
      throw Object.assign(new Error(`${mode.errno}: write failed`), { code: mode.errno });
    },
  };
  return { file, mode };
}

function session(path: string, o: { file?: AuditFile; warn?: (m: string, f?: Record<string, unknown>) => void; now?: () => number } = {}) {
  return openAuditSession({
    policies: [{ name: 'audited', spec: { rules: [], audit: { destination: 'file' } } }],
    path,
    file: o.file,
    now: o.now ?? (() => T0),
    monotonic: () => 0,
    redact: (s) => s.split(SECRET).join('[REDACTED]'),
    warn: o.warn,
  })!;
}

/** One tool call through the gates and the auditor: its outcome. */
function caller(s: ReturnType<typeof session>) {
  const check = compileArgumentSchema({ type: 'object' });
  const impl = fakeImpl(async () => ok('done'));
  const deps = makeDeps();
  deps.observe = s.auditor.observe;
  const call = (id: string, tool = 't1') => {
    const c = makeCall({ tool: boundTool({ impl, name: tool }), requestId: id, args: { password: SECRET, note: ARG } });
    return settle(Promise.resolve().then(() => s.auditor.run(c, 'operator', () => runGates(c, check, deps))));
  };
  return { call, impl };
}

// ---- on a real full file system --------------------------------------------------------------

const canMount = process.platform === 'linux' && process.getuid?.() === 0 && spawnSync('mount', ['--version']).status === 0;

/** A small tmpfs, mounted; `fill()` takes all its free space, `free()` gives it back. */
function tmpfs(): { dir: string; fill(): void; free(): void; done(): void } | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'claw-audit-outage-fs-'));
  if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=512k', 'tmpfs', dir]).status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
  const filler = join(dir, 'filler');
  return {
    dir,
    fill() {
      try {
        writeFileSync(filler, Buffer.alloc(1024 * 1024));
      } catch {
        // ENOSPC: the filler took everything there was
      }
    },
    free: () => unlinkSync(filler),
    done() {
      spawnSync('umount', [dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Calls until the full disk refuses one (the file's last page may still take a line or two), then
 * `k` more. The ids have one length, so no later line is shorter than the one that did not fit.
 */
async function refuseOnFullDisk(call: (id: string) => Promise<{ error?: any }>, k: number): Promise<string[]> {
  const id = (p: string, i: number) => `${p}-${String(i).padStart(2, '0')}`;
  const refused: string[] = [];
  for (let i = 0; i < 50 && refused.length === 0; i++) {
    const r = await call(id('warm', i));
    if (r.error) refused.push(id('warm', i));
  }
  assert.ok(refused.length > 0, 'the full disk refused a call');
  for (let i = 0; i < k; i++) {
    const r = await call(id('refu', i));
    assert.is(r.error?.code, ErrorCode.PolicyDenied);
    assert.equal([r.error.data.rule_id, r.error.data.errno, r.error.data.executed], ['audit:write_failed', 'ENOSPC', false]);
    refused.push(id('refu', i));
  }
  return refused;
}

(canMount ? test : test.skip)('full tmpfs: the calls refused meanwhile are in the audit.outage record written before the first record after it; the chain verifies; no argument value', async () => {
  const fs = tmpfs();
  if (!fs) return;
  try {
    const path = join(fs.dir, 'audit', 'audit.jsonl');
    let now = T0;
    const s = session(path, { now: () => (now += 1000) });
    const { call, impl } = caller(s);
    assert.is((await call('before')).error, undefined);
    fs.fill();
    const refused = await refuseOnFullDisk(call, 39); // 40 or so: more than the 32 listed
    const ran = impl.calls.length;
    fs.free();
    assert.is((await call('after')).error, undefined, 'the disk has room again: the call runs');
    assert.is(impl.calls.length, ran + 1);
    await s.close();

    const recs = records(path);
    const at = recs.findIndex((r) => r.kind === 'audit.outage');
    assert.ok(at > 0, 'an outage record');
    assert.is(recs.filter((r) => r.kind === 'audit.outage').length, 1);
    // Right before the first record that got through: the next call's capability.requested.
    assert.equal([recs[at + 1].kind, recs[at + 1].data.request_id], ['capability.requested', 'after']);
    const d = recs[at].data;
    assert.is(d.refused, refused.length);
    assert.is(d.calls.length, 32);
    assert.is(d.calls_omitted, refused.length - 32);
    assert.equal(
      d.calls.map((c: any) => c.request_id),
      refused.slice(0, 32),
    );
    assert.equal(d.calls[1], { ts: d.calls[1].ts, record: 'capability.requested', request_id: refused[1], tool: 't1', origin: 'operator', executed: false });
    assert.equal([d.errno, d.errnos], ['ENOSPC', ['ENOSPC']]);
    assert.ok(d.failed_appends >= refused.length);
    assert.ok(d.since <= d.until && d.since > recs[at - 1].ts && d.until < recs[at].ts, `${d.since} .. ${d.until}`);
    const text = readFileSync(path, 'utf8');
    // log_inputs is on: the calls that ran have their args in capability.requested; the outage has none.
    assert.ok(text.includes(ARG));
    assert.not.ok(text.split('\n')[at].includes(ARG), 'no argument value in the outage record');
    assert.not.ok(text.includes(SECRET));
    assert.not.ok(d.calls.some((c: any) => 'args' in c || 'args_sha256' in c));
    const v = verifyAuditText(text);
    assert.is(v.ok, true, JSON.stringify(v.broken));
    assert.equal(v.outages, { count: 1, refused: refused.length, first: [{ seq: recs[at].seq, line: at + 1, since: d.since, until: d.until, refused: refused.length }] });
  } finally {
    fs.done();
  }
});

(canMount ? test : test.skip)('full tmpfs: a clean close after the disk has room again writes the outage record (at_close); still full, it is warned as lost and the file verifies', async () => {
  for (const room of [true, false]) {
    const fs = tmpfs();
    if (!fs) return;
    try {
      const path = join(fs.dir, 'audit', 'audit.jsonl');
      const warnings: [string, Record<string, unknown> | undefined][] = [];
      const s = session(path, { warn: (m, f) => warnings.push([m, f]) });
      const { call } = caller(s);
      fs.fill();
      const refused = await refuseOnFullDisk(call, 2);
      if (room) fs.free();
      await s.close();
      const recs = records(path);
      const out = recs.filter((r) => r.kind === 'audit.outage');
      const lost = warnings.find(([m]) => m.startsWith('audit outage record lost'));
      if (room) {
        assert.is(out.length, 1);
        assert.equal([out[0].data.refused, out[0].data.at_close, recs.at(-1).kind], [refused.length, true, 'audit.outage']);
        assert.is(lost, undefined);
      } else {
        assert.is(out.length, 0);
        assert.ok(lost, JSON.stringify(warnings));
        assert.equal([lost![1]?.refused, lost![1]?.errno], [refused.length, 'ENOSPC']);
      }
      assert.is(verifyAuditText(readFileSync(path)).ok, true);
    } finally {
      fs.done();
    }
  }
});

// ---- the failure injected around the real file ---------------------------------------------------

test('bounds: the first 32 refused calls by name, the rest counted; long ids cut; distinct errnos; a call failing two appends counts once', async () => {
  const path = fresh();
  const { file, mode } = failing(path);
  const s = session(path, { file });
  const { call } = caller(s);
  mode.full = true;
  const long = 'x'.repeat(500);
  assert.is((await call(long)).error?.code, ErrorCode.PolicyDenied);
  for (let i = 1; i < 40; i++) {
    if (i === 20) mode.errno = 'EIO';
    assert.is((await call(`r${i}`)).error?.code, ErrorCode.PolicyDenied);
  }
  mode.full = false;
  assert.is((await call('after')).error, undefined);
  await s.close();
  const d = records(path).find((r) => r.kind === 'audit.outage')!.data;
  assert.equal([d.refused, d.calls.length, d.calls_omitted, d.failed_appends], [40, 32, 8, 40]);
  assert.is(d.calls[0].request_id, `${'x'.repeat(128)}…`);
  assert.equal([d.errno, d.errnos], ['ENOSPC', ['ENOSPC', 'EIO']]);
  assert.is(verifyAuditText(readFileSync(path)).ok, true);
});

test('a call whose authorization.decided failed (and its deny record too) is one refusal; a model output refused names its turn', async () => {
  const path = fresh();
  const w = failing(path);
  const s = session(path, { file: w.file });
  const { call } = caller(s);
  // capability.requested gets through, then the disk is full for the rest of the call.
  const inner = w.file.append;
  w.file.append = (line) => {
    inner(line);
    w.mode.full = true;
    w.file.append = inner;
  };
  const r = await call('r1');
  assert.is(r.error?.data.rule_id, 'audit:write_failed');
  const raw = '{"message":"hi"}';
  assert.throws(() => s.recordVerdict(raw, validateOutput(raw, new Map()), { turn: 'turn-7' }));
  w.mode.full = false;
  s.recordVerdict(raw, validateOutput(raw, new Map()), { turn: 'turn-8' });
  await s.close();
  const recs = records(path);
  const d = recs.find((x) => x.kind === 'audit.outage')!.data;
  assert.equal([d.refused, d.failed_appends], [2, 3]);
  assert.equal(
    d.calls.map((c: any) => [c.record, c.request_id ?? c.turn, c.executed]),
    [
      ['authorization.decided', 'r1', false],
      ['protocol.received', 'turn-7', false],
    ],
  );
  assert.equal(
    recs.map((x) => x.kind).slice(0, 4),
    ['audit.opened', 'capability.requested', 'audit.outage', 'protocol.received'],
  );
});

test('the outage record itself failing keeps the account (one more failed append); it is written once the disk takes it', () => {
  const path = fresh();
  const { file, mode } = failing(path);
  const log = AuditLog.open({ file, now: () => T0, redact: (s) => s });
  mode.full = true;
  assert.throws(() => log.append('execution.started', { request_id: 'a' }));
  log.noteRefused({ kind: 'execution.started', request_id: 'a', executed: false });
  // The next append tries the outage record first: it fails too.
  assert.throws(() => log.append('execution.started', { request_id: 'b' }));
  log.noteRefused({ kind: 'execution.started', request_id: 'b', executed: false });
  mode.full = false;
  log.append('execution.started', { request_id: 'c' });
  log.close();
  const recs = records(path);
  assert.equal(
    recs.map((r) => r.kind),
    ['audit.opened', 'audit.outage', 'execution.started'],
  );
  assert.equal([recs[1].data.refused, recs[1].data.failed_appends, recs[1].data.calls.map((c: any) => c.request_id)], [2, 2, ['a', 'b']]);
  assert.is(verifyAuditText(readFileSync(path)).ok, true);
});

test('opens refused for a full disk are one outage, written before the audit.opened of the open that succeeds', async () => {
  const path = fresh();
  const mode = { full: true };
  const openOutage = {};
  let now = T0;
  const attempt = () => {
    const f = failing(path);
    f.mode.full = mode.full;
    return openAuditSession({
      policies: [{ name: 'audited', spec: { rules: [], audit: { destination: 'file' } } }],
      path,
      file: f.file,
      now: () => now,
      monotonic: () => 0,
      redact: (s) => s,
      openOutage,
    });
  };
  for (let i = 0; i < 3; i++) {
    now += 5000;
    const e = (() => {
      try {
        attempt();
      } catch (x) {
        return x as { code: number; data: Record<string, unknown> };
      }
    })();
    assert.is(e?.code, ErrorCode.PolicyDenied, 'claw.initialize still answers -32011');
    assert.is(e?.data.errno, 'ENOSPC');
  }
  mode.full = false;
  now += 5000;
  const s = attempt()!;
  s.log.append('execution.started', { request_id: 'after' });
  await s.close();
  const recs = records(path);
  assert.equal(recs.map((r) => r.kind), ['audit.outage', 'audit.opened', 'execution.started']);
  const d = recs[0].data;
  assert.equal([d.refused, d.failed_appends, d.errno, d.since, d.until], [3, 3, 'ENOSPC', new Date(T0 + 5000).toISOString(), new Date(T0 + 15000).toISOString()]);
  assert.equal(d.calls.map((c: any) => [c.record, c.executed]), [['audit.opened', false], ['audit.opened', false], ['audit.opened', false]]);
  assert.is(verifyAuditText(readFileSync(path)).ok, true);
  // Accounted once: a later session of the same runtime starts without it.
  const again = attempt()!;
  await again.close();
  assert.equal(records(path).slice(3).map((r) => r.kind), ['audit.opened']);
});

test('segments: the outage record follows a rotation’s audit.segment link; the directory verifies and lists the outage by file', () => {
  const path = fresh();
  const dir = join(path, '..');
  let now = T0;
  const seg = nodeAuditSegments(dir, { maxAgeMs: 60_000, maxBytes: 1 << 30 });
  let ctl: ReturnType<typeof failing>['mode'] | undefined;
  const inner = seg.rotate.bind(seg);
  seg.rotate = (f, firstSeq, at) => {
    const r = inner(f, firstSeq, at);
    r.file.close();
    const w = failing(path);
    ctl = w.mode;
    w.mode.full = true;
    return { file: w.file, closed: r.closed };
  };
  const log = AuditLog.open({ file: openAuditFile(path), now: () => now, redact: (s) => s, segments: seg });
  log.append('execution.finished', { request_id: 'a' });
  now += 60_000;
  assert.throws(() => log.append('execution.finished', { request_id: 'lost' }));
  log.noteRefused({ kind: 'execution.finished', request_id: 'lost', executed: true });
  ctl!.full = false;
  log.append('execution.finished', { request_id: 'b' });
  log.close();
  assert.equal(
    records(path).map((r) => r.kind),
    ['audit.segment', 'audit.outage', 'execution.finished'],
  );
  const r = verifyAuditSegments(readAuditDirectory(dir));
  assert.is(r.ok, true, JSON.stringify(r.broken));
  assert.equal([r.outages?.count, r.outages?.refused, r.outages?.first[0].file], [1, 1, 'audit.jsonl']);
});

test('the sqlite mirror gets the outage record as a row like any other (kind audit.outage, the file line byte for byte)', async () => {
  const path = fresh();
  const db = join(path, '..', 'mirror.sqlite');
  const { file, mode } = failing(path);
  const s = openAuditSession({
    policies: [{ name: 'p', spec: { rules: [], audit: { destination: 'sqlite' } } }],
    path,
    file,
    now: () => T0,
    monotonic: () => 0,
    redact: (x) => x,
    runtime: { sqlite: { path: db } },
    sinkDeps: { sqliteAdapter: 'sqljs' },
  })!;
  const { call } = caller(s);
  mode.full = true;
  assert.is((await call('r1')).error?.code, ErrorCode.PolicyDenied);
  mode.full = false;
  assert.is((await call('r2')).error, undefined);
  await s.close();
  const line = readFileSync(path, 'utf8').split('\n').find((l) => l.includes('"kind":"audit.outage"'));
  assert.ok(line);
  const d = await openDatabase({ path: db, adapter: 'sqljs' });
  const rows = d.prepare("SELECT kind, record FROM audit_records WHERE kind = 'audit.outage'").all();
  d.close();
  assert.equal(rows, [{ kind: 'audit.outage', record: line }]);
});

// ---- verify: an outage record is valid; a forged or malformed one is a break ------------------

function chain(kinds: [string, Record<string, unknown>][]): string[] {
  let head: { seq: number; hash: string } | undefined;
  return kinds.map(([k, d], i) => {
    const { record, line } = chainRecord(head, k as any, d, new Date(T0 + i).toISOString());
    head = { seq: record.seq, hash: record.hash };
    return line;
  });
}
const good = {
  since: '2026-11-22T00:00:00.000Z',
  until: '2026-11-22T00:01:00.000Z',
  failed_appends: 3,
  refused: 2,
  errno: 'ENOSPC',
  errnos: ['ENOSPC'],
  calls: [{ ts: '2026-11-22T00:00:00.000Z', record: 'capability.requested', request_id: 'r1', tool: 't1', origin: 'operator', executed: false }],
  calls_omitted: 1,
};
const text = (lines: string[]) => lines.map((l) => `${l}\n`).join('');

test('verify: a written outage record verifies and is listed; syslog sends it as a warning', () => {
  const lines = chain([
    ['audit.opened', { resumed: false }],
    ['audit.outage', good],
    ['execution.started', {}],
  ]);
  const v = verifyAuditText(text(lines));
  assert.is(v.ok, true, JSON.stringify(v.broken));
  assert.equal(v.outages, { count: 1, refused: 2, first: [{ seq: 1, line: 2, since: good.since, until: good.until, refused: 2 }] });
  assert.is(syslogSeverity({ kind: 'audit.outage', data: good }), 4);
});

test('verify: a forged outage record — inserted, edited, or well hashed but not an outage account — breaks the chain', () => {
  const lines = chain([
    ['audit.opened', { resumed: false }],
    ['audit.outage', good],
    ['execution.started', {}],
  ]);
  assert.is(verifyAuditText(text(lines)).ok, true, 'the genuine one verifies');
  // Inserted: a well-formed outage record that does not follow its predecessor.
  const [extra] = chain([['audit.outage', good]]);
  assert.equal(verifyAuditText(text([lines[0], extra, ...lines.slice(1)])).broken?.reason, 'prev_mismatch');
  // Edited: fewer refusals than there were.
  assert.equal(verifyAuditText(text([lines[0], lines[1].replace('"refused":2', '"refused":1'), lines[2]])).broken?.reason, 'hash_mismatch');
  // Well hashed but not what the writer writes.
  for (const [bad, why] of [
    [{ ...good, refused: 5 }, 'calls + calls_omitted is not refused'],
    [{ ...good, calls: [{ ...good.calls[0], args: { password: 'x' } }] }, 'unknown call fields args'],
    [{ ...good, calls: [{ ...good.calls[0], tool: 7 }] }, 'a call'],
    [{ ...good, since: 'yesterday' }, 'since/until'],
    [{ ...good, until: '2026-11-21T00:00:00.000Z' }, 'since/until'],
    [{ ...good, failed_appends: 0 }, 'counts'],
    [{ ...good, errnos: [] }, 'errno/errnos'],
    [{ ...good, note: 'x' }, 'unknown fields note'],
  ] as const) {
    const forged = chain([
      ['audit.opened', { resumed: false }],
      ['audit.outage', bad],
    ]);
    const v = verifyAuditText(text(forged));
    assert.equal([v.broken?.reason, v.broken?.line, v.broken?.detail], ['bad_shape', 2, `not an outage account: ${why}`]);
  }
});

test.after(() => rmSync(root, { recursive: true, force: true }));
test.run();
