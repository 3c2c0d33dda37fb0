// A failed audit write (src/audit/log.ts, refusal.ts, gate-audit.ts, session.ts; docs/audit.md
// "Failure"): the caller sees -32011 naming the file and the file system's error, the call whose
// record could not be written does not run, and the log continues its chain by itself once writes
// succeed again — after a torn partial write, after a whole line whose fsync failed, and across a
// segment rotation — so `claw audit verify` still passes. The failing write is injected around the
// real file (node-file.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync, writeSync, openSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditLog, AuditError, type AuditFile } from '../../src/audit/log.ts';
import { openAuditFile } from '../../src/audit/node-file.ts';
import { nodeAuditSegments, readAuditDirectory } from '../../src/audit/node-segments.ts';
import { verifyAuditSegments } from '../../src/audit/segments.ts';
import { verifyAuditText } from '../../src/audit/verify.ts';
import { openAuditSession } from '../../src/audit/session.ts';
import { ErrorCode, ProtocolError, isNotExecuted } from '../../src/protocol/errors.ts';
import { DedupCache } from '../../src/kernel/idempotency.ts';
import { runGates } from '../../src/gates/pipeline.ts';
import { compileArgumentSchema } from '../../src/tools/json-schema.ts';
import { validateOutput } from '../../src/femtoclaw/validate.ts';
import { boundTool, fakeImpl, makeCall, makeDeps, ok, settle } from './helpers/gate-fakes.ts';

const root = mkdtempSync(join(tmpdir(), 'claw-audit-fail-'));
let n = 0;
const T0 = Date.UTC(2026, 10, 22);

const enospc = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', syscall: 'write' });
const eio = () => Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO', syscall: 'fsync' });

/**
 * The real file with a failure switch: `partial` writes the first half of the line and then fails
 * as a full disk does; `whole` writes the line and fails the fsync (an I/O error after the data
 * reached the page cache); `truncate` also refuses the repair.
 */
function failing(path: string) {
  const f = openAuditFile(path);
  const mode = { write: undefined as undefined | 'partial' | 'whole', truncate: false };
  let written = false;
  const file: AuditFile = {
    ...f,
    path,
    append(line) {
      if (mode.write === 'partial') {
        const fd = openSync(path, 'a');
        writeSync(fd, line.slice(0, Math.floor(line.length / 2)));
        closeSync(fd);
        throw enospc();
      }
      f.append(line);
      written = true;
    },
    sync() {
      if (mode.write === 'whole' && written) {
        written = false;
        throw eio();
      }
      f.sync();
    },
    truncate(size) {
      if (mode.truncate) throw enospc();
      f.truncate(size);
    },
  };
  return { file, mode };
}

const fresh = (name = 'audit.jsonl') => {
  const dir = join(root, `d${n++}`);
  mkdirSync(dir, { recursive: true });
  return join(dir, name);
};
const kinds = (path: string) => readFileSync(path, 'utf8').split('\n').slice(0, -1).map((l) => JSON.parse(l).kind);

for (const how of ['partial', 'whole'] as const) {
  test(`a ${how === 'partial' ? 'torn write (ENOSPC)' : 'whole line whose fsync failed (EIO)'} is cut on the next append; the chain continues and verifies`, () => {
    const path = fresh();
    const { file, mode } = failing(path);
    const log = AuditLog.open({ file, now: () => T0, redact: (s) => s });
    log.append('execution.started', { request_id: 'a' }); // seq 1
    mode.write = how;
    try {
      log.append('execution.finished', { request_id: 'lost' });
      assert.unreachable('the failed write was reported as written');
    } catch (e) {
      assert.instance(e, AuditError);
      assert.is((e as AuditError).code, 'write_failed');
      assert.is((e as AuditError).errno, how === 'partial' ? 'ENOSPC' : 'EIO');
      assert.is((e as AuditError).path, path);
      assert.match((e as Error).message, `the audit record could not be written to ${path}: `);
    }
    assert.is(log.head!.seq, 1, 'the head stays at the last good record');
    // Still failing: the repair cuts, the new record fails again; nothing is counted as written.
    assert.throws(() => log.append('execution.finished', { request_id: 'lost-2' }), (e: any) => e instanceof AuditError && e.code === 'write_failed');
    mode.write = undefined;
    const r = log.append('execution.finished', { request_id: 'b' });
    assert.is(r.seq, 3, 'after the outage record (seq 2)');
    log.close();
    const text = readFileSync(path, 'utf8');
    assert.not.ok(text.includes('lost'));
    const v = verifyAuditText(text);
    assert.equal([v.ok, v.verified, v.head], [true, 4, r.hash]);
  });
}

test('a repair that fails too (truncate refused) is retried by the next append', () => {
  const path = fresh();
  const { file, mode } = failing(path);
  const log = AuditLog.open({ file, now: () => T0, redact: (s) => s });
  mode.write = 'partial';
  assert.throws(() => log.append('execution.started', {}), (e: any) => e instanceof AuditError && e.code === 'write_failed');
  mode.write = undefined;
  mode.truncate = true;
  assert.throws(() => log.append('execution.started', {}), (e: any) => e instanceof AuditError && e.code === 'write_failed' && e.errno === 'ENOSPC' && /could not be written/.test(e.message));
  mode.truncate = false;
  assert.is(log.append('execution.started', {}).seq, 2, 'after the outage record (seq 1)');
  log.close();
  assert.is(verifyAuditText(readFileSync(path)).ok, true);
});

test('bytes after the head that are not the failed record are never cut: corrupt, the log stays refused', () => {
  const path = fresh();
  const { file, mode } = failing(path);
  const log = AuditLog.open({ file, now: () => T0, redact: (s) => s });
  mode.write = 'partial';
  assert.throws(() => log.append('execution.started', {}));
  mode.write = undefined;
  // Someone else appends a whole line behind the writer's back.
  writeFileSync(path, readFileSync(path, 'utf8').replace(/\{[^\n]*$/, '') + '{"other":"writer"}\n');
  assert.throws(() => log.append('execution.started', {}), (e: any) => e instanceof AuditError && e.code === 'corrupt');
  assert.throws(() => log.append('execution.started', {}), (e: any) => e instanceof AuditError && e.code === 'corrupt');
  log.close();
  assert.ok(readFileSync(path, 'utf8').endsWith('{"other":"writer"}\n'));
});

test('segments: the new segment’s audit.segment record failed → it is written first once writes succeed; the directory verifies', () => {
  const path = fresh();
  const dir = join(path, '..');
  let now = T0;
  const seg = nodeAuditSegments(dir, { maxAgeMs: 60_000, maxBytes: 1 << 30 });
  const inner = seg.rotate.bind(seg);
  let breakNext = false;
  // The rotated-in active file fails its first write.
  seg.rotate = (f, firstSeq, at) => {
    const r = inner(f, firstSeq, at);
    if (!breakNext) return r;
    r.file.close();
    const w = failing(path);
    w.mode.write = 'partial';
    ctl = w.mode;
    return { file: w.file, closed: r.closed };
  };
  let ctl: ReturnType<typeof failing>['mode'] | undefined;
  const log = AuditLog.open({ file: openAuditFile(path), now: () => now, redact: (s) => s, fsync: 'none', segments: seg });
  log.append('execution.finished', { request_id: 'a' }); // 1
  now += 60_000;
  breakNext = true;
  assert.throws(() => log.append('execution.finished', { request_id: 'lost' }), (e: any) => e instanceof AuditError && e.code === 'write_failed');
  ctl!.write = undefined;
  log.append('execution.finished', { request_id: 'b' });
  log.close();
  // The segment's link first (it must be its first record), then the outage, then the record.
  assert.equal(kinds(path), ['audit.segment', 'audit.outage', 'execution.finished']);
  const r = verifyAuditSegments(readAuditDirectory(dir));
  assert.is(r.ok, true);
  assert.is(r.verified, 5);
});

// ---- what the caller sees ------------------------------------------------------------------

function session(path: string, file?: AuditFile) {
  return openAuditSession({
    policies: [{ name: 'audited', spec: { rules: [], audit: { destination: 'file', retention: '1d', log_outputs: true } } }],
    path,
    file,
    now: () => T0,
    monotonic: () => 0,
    redact: (s) => s.split('hunter22').join('[REDACTED]'),
  })!;
}

test('gate path: capability.requested not written → -32011 naming the file and ENOSPC, the tool not run; the next call runs', async () => {
  const path = fresh();
  const { file, mode } = failing(path);
  const s = session(path, file);
  const check = compileArgumentSchema({ type: 'object' });
  const impl = fakeImpl(async () => ok('done'));
  const deps = makeDeps();
  deps.observe = s.auditor.observe;
  const call = (id: string) => makeCall({ tool: boundTool({ impl }), requestId: id, args: { password: 'hunter22' } });

  mode.write = 'partial';
  const c1 = call('r1');
  const r1 = await settle(Promise.resolve().then(() => s.auditor.run(c1, 'operator', () => runGates(c1, check, deps))));
  assert.instance(r1.error, ProtocolError);
  assert.is(r1.error.code, ErrorCode.PolicyDenied);
  assert.match(r1.error.message, `Policy denied: the audit record could not be written to ${path}: ENOSPC`);
  assert.match(r1.error.message, /; not run$/);
  assert.equal(r1.error.data, { rule_id: 'audit:write_failed', action: 'deny', tool: 't1', request_id: 'r1', executed: false, path, errno: 'ENOSPC' });
  assert.not.ok(JSON.stringify(r1.error.toJSON()).includes('hunter22'));
  assert.is(impl.calls.length, 0, 'nothing executes unrecorded');
  // Not kept as the request_id's outcome: the same request_id runs once the disk takes writes again.
  assert.ok(isNotExecuted(r1.error.code, r1.error.data));

  mode.write = undefined;
  const c2 = call('r2');
  assert.equal(await s.auditor.run(c2, 'operator', () => runGates(c2, check, deps)), ok('done'));
  assert.is(impl.calls.length, 1);
  await s.close();
  assert.equal(kinds(path), ['audit.opened', 'audit.outage', 'capability.requested', 'authorization.decided', 'execution.started', 'execution.finished']);
  assert.is(verifyAuditText(readFileSync(path)).ok, true);
});

test('gate path: execution.started not written → the tool does not run; execution.finished not written → executed: true, the result withheld', async () => {
  const path = fresh();
  const w = failing(path);
  const s = session(path, w.file);
  const check = compileArgumentSchema({ type: 'object' });
  const deps = makeDeps();
  let appends = 0;
  // Fail the n-th record of the next call (1 capability.requested, 2 authorization.decided, 3 execution.started, 4 execution.finished).
  const failAt = (k: number) => {
    appends = 0;
    const inner = w.file.append;
    w.file.append = (line) => {
      if (++appends === k) {
        w.file.append = inner;
        w.mode.write = 'partial';
        try {
          return inner(line);
        } finally {
          w.mode.write = undefined;
        }
      }
      return inner(line);
    };
  };
  const observe = s.auditor.observe;
  deps.observe = observe;

  failAt(3);
  const impl = fakeImpl(async () => ok('done'));
  const c1 = makeCall({ tool: boundTool({ impl }), requestId: 'r1' });
  const r1 = await settle(Promise.resolve().then(() => s.auditor.run(c1, 'operator', () => runGates(c1, check, deps))));
  assert.is(r1.error?.code, ErrorCode.PolicyDenied);
  assert.is(r1.error.data.executed, false);
  assert.is(impl.calls.length, 0);

  failAt(4); // 1 capability.requested, 2 authorization.decided, 3 execution.started, 4 execution.finished
  const c2 = makeCall({ tool: boundTool({ impl }), requestId: 'r2' });
  const r2 = await settle(Promise.resolve().then(() => s.auditor.run(c2, 'operator', () => runGates(c2, check, deps))));
  assert.is(impl.calls.length, 1);
  assert.is(r2.error?.code, ErrorCode.PolicyDenied);
  assert.equal(r2.error.data, { rule_id: 'audit:write_failed', action: 'deny', tool: 't1', request_id: 'r2', executed: true, path, errno: 'ENOSPC' });
  assert.match(r2.error.message, /; the tool ran, its result is withheld$/);
  assert.not.ok(isNotExecuted(r2.error.code, r2.error.data), 'a call that ran is kept for its request_id: a retry does not run it twice');
  await s.close();
  const recs = readFileSync(path, 'utf8').split('\n').slice(0, -1).map((l) => JSON.parse(l));
  // The first call's refusal was recorded once the log took writes again (gate `audit`).
  const denied = recs.find((r) => r.kind === 'authorization.decided' && r.data.decision === 'deny');
  assert.equal([denied?.data.gate, denied?.data.rule_id, denied?.data.request_id], ['audit', 'audit:write_failed', 'r1']);
  assert.is(verifyAuditText(readFileSync(path)).ok, true);
});

test('dedup: the same request_id retried after an unrun audit refusal runs (the refusal is not its outcome)', async () => {
  const dedup = new DedupCache<string>({ now: () => T0, monotonic: () => 0 } as any, 60_000);
  const refusal = new ProtocolError(ErrorCode.PolicyDenied, 'Policy denied: the audit record could not be written', { rule_id: 'audit:write_failed', executed: false });
  let runs = 0;
  const first = dedup.run('r1', 'fp', () => {
    runs++;
    return Promise.reject(refusal);
  });
  await settle((first as any).outcome);
  const second = dedup.run('r1', 'fp', () => {
    runs++;
    return Promise.resolve('ran');
  });
  assert.is(await (second as any).outcome, 'ran');
  assert.is(runs, 2);
});

test('agent loop: a model output that cannot be recorded stops the turn with -32011 (executed: false)', () => {
  const path = fresh();
  const { file, mode } = failing(path);
  const s = session(path, file);
  const raw = '{"tool_call":{"tool":"t1","args":{}}}';
  const v = validateOutput(raw, new Map([['t1', compileArgumentSchema({ type: 'object' })]]));
  mode.write = 'whole';
  try {
    s.recordVerdict(raw, v, { turn: 't' });
    assert.unreachable('recorded');
  } catch (e) {
    assert.instance(e, ProtocolError);
    assert.is((e as ProtocolError).code, ErrorCode.PolicyDenied);
    assert.equal((e as ProtocolError).data, { rule_id: 'audit:write_failed', action: 'deny', executed: false, path, errno: 'EIO' });
  }
  mode.write = undefined;
  s.recordVerdict(raw, v, { turn: 't' });
  void s.close();
  assert.equal(kinds(path), ['audit.opened', 'audit.outage', 'protocol.received', 'protocol.validated']);
  assert.is(verifyAuditText(readFileSync(path)).ok, true);
});

test('STARTING (claw.initialize): a full disk or a corrupt last record is -32011 with state ERROR, not a bare error', () => {
  const path = fresh();
  const { file, mode } = failing(path);
  mode.write = 'partial';
  try {
    session(path, file);
    assert.unreachable('opened');
  } catch (e) {
    assert.instance(e, ProtocolError);
    assert.is((e as ProtocolError).code, ErrorCode.PolicyDenied);
    assert.equal((e as ProtocolError).data, { rule_id: 'audit:write_failed', action: 'deny', state: 'ERROR', path, errno: 'ENOSPC' });
  }
  // The failed open left the file at its last good record (empty here): the next start writes and verifies.
  assert.is(readFileSync(path, 'utf8'), '');
  const ok1 = session(path);
  void ok1.close();
  assert.is(verifyAuditText(readFileSync(path)).ok, true);

  writeFileSync(path, readFileSync(path, 'utf8').replace('"resumed":false', '"resumed":true'));
  try {
    session(path);
    assert.unreachable('opened a corrupt log');
  } catch (e) {
    assert.instance(e, ProtocolError);
    assert.is((e as ProtocolError).code, ErrorCode.PolicyDenied);
    assert.match((e as ProtocolError).message, `the last record of the audit log ${path} is not intact`);
    assert.equal((e as ProtocolError).data, { rule_id: 'audit:corrupt', action: 'deny', state: 'ERROR', path });
  }
});

test.after(() => rmSync(root, { recursive: true, force: true }));
test.run();
