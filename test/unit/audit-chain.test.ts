// The audit log (src/audit): hash chain written through the real file adapter, verified by
// verifyAuditText; tampering (every byte of a middle record), deletion, reordering, insertion,
// torn tails, restart, corruption, redaction, write failures.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, writeFileSync, appendFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditLog, AuditError, type AuditFile } from '../../src/audit/log.ts';
import { openAuditFile } from '../../src/audit/node-file.ts';
import { verifyAuditText } from '../../src/audit/verify.ts';
import { GENESIS, recordHash } from '../../src/audit/record.ts';
import { Redactor } from '../../src/log/redactor.ts';

const dirs: string[] = [];
function tmpFile(): string {
  const d = mkdtempSync(join(tmpdir(), 'claw-audit-'));
  dirs.push(d);
  return join(d, 'audit', 'audit.jsonl');
}
let t0 = Date.UTC(2026, 10, 22, 1, 0, 0);
const open = (path: string, redact = (s: string) => s) => AuditLog.open({ file: openAuditFile(path), now: () => t0++, redact });

/** A log with the opening record and `n` more (seq 0..n). */
function writeLog(n: number): { path: string; lines: string[] } {
  const path = tmpFile();
  const log = open(path);
  for (let i = 1; i <= n; i++) log.append(i % 2 ? 'capability.requested' : 'execution.finished', { tool: 'echo', request_id: `r${i}`, args: { text: `hello ${i}`, n: i } });
  log.close();
  const text = readFileSync(path, 'utf8');
  return { path, lines: text.split('\n').slice(0, -1) };
}
const join1 = (lines: string[]) => lines.map((l) => `${l}\n`).join('');

test('a fresh log verifies: every record chained to the one before, head = the last hash', () => {
  const { path, lines } = writeLog(5);
  assert.is(lines.length, 6);
  const recs = lines.map((l) => JSON.parse(l));
  assert.equal(recs.map((r) => r.seq), [0, 1, 2, 3, 4, 5]);
  assert.is(recs[0].kind, 'audit.opened');
  assert.equal(recs[0].data, { resumed: false });
  assert.is(recs[0].prev, GENESIS);
  for (let i = 1; i < recs.length; i++) assert.is(recs[i].prev, recs[i - 1].hash);
  for (const r of recs) assert.is(recordHash(r), r.hash);
  // On disk: canonical, keys sorted, no whitespace.
  assert.ok(lines[1].startsWith('{"data":{"args":{"n":1,"text":"hello 1"},"request_id":"r1","tool":"echo"},"hash":"'), lines[1]);
  const v = verifyAuditText(readFileSync(path));
  assert.equal(v, { ok: true, verified: 6, head: recs[5].hash, lastSeq: 5, start: { seq: 0, prev: GENESIS } });
  assert.equal(verifyAuditText(''), { ok: true, verified: 0, head: GENESIS, lastSeq: -1 });
});

test('changing any single byte of a middle record is reported at that record', () => {
  const { lines } = writeLog(4);
  const k = 2; // line 3, seq 2
  const target = lines[k];
  for (let i = 0; i < target.length; i++) {
    const c = target.charCodeAt(i);
    const flipped = target.slice(0, i) + String.fromCharCode(c === 0x30 ? 0x31 : c ^ 0x01) + target.slice(i + 1);
    const copy = [...lines];
    copy[k] = flipped;
    const v = verifyAuditText(join1(copy));
    assert.not.ok(v.ok, `byte ${i}`);
    assert.is(v.broken!.line, k + 1, `byte ${i}: ${JSON.stringify(v.broken)}`);
    assert.is(v.verified, k);
  }
});

test('an edited value that is still valid JSON → hash_mismatch naming the record', () => {
  const { lines } = writeLog(4);
  const copy = [...lines];
  copy[3] = copy[3].replace('hello 3', 'hello X');
  const v = verifyAuditText(join1(copy));
  assert.equal(v.broken, { line: 4, seq: 3, reason: 'hash_mismatch', detail: 'content does not match its hash (edited)' });
  assert.is(v.head, JSON.parse(lines[2]).hash);
});

test('a deleted record → prev_mismatch at the record after it', () => {
  const { lines } = writeLog(5);
  const copy = lines.filter((_, i) => i !== 3);
  const v = verifyAuditText(join1(copy));
  assert.equal([v.ok, v.verified, v.broken!.line, v.broken!.seq, v.broken!.reason], [false, 3, 4, 4, 'prev_mismatch']);
  // Deleting the first record: the new first one does not start the chain.
  const w = verifyAuditText(join1(lines.slice(1)));
  assert.equal([w.broken!.line, w.broken!.seq, w.broken!.reason], [1, 1, 'prev_mismatch']);
});

test('reordered records → prev_mismatch at the first moved one; a duplicated record too', () => {
  const { lines } = writeLog(5);
  const copy = [...lines];
  [copy[2], copy[3]] = [copy[3], copy[2]];
  const v = verifyAuditText(join1(copy));
  assert.equal([v.broken!.line, v.broken!.seq, v.broken!.reason], [3, 3, 'prev_mismatch']);
  const dup = [...lines.slice(0, 4), lines[3], ...lines.slice(4)];
  const d = verifyAuditText(join1(dup));
  assert.equal([d.broken!.line, d.broken!.seq, d.broken!.reason], [5, 3, 'prev_mismatch']);
});

test('whitespace or key order changed (same JSON value) → not_canonical', () => {
  const { lines } = writeLog(2);
  const copy = [...lines];
  copy[1] = JSON.stringify(JSON.parse(copy[1]), null, 0).replace('{"data"', '{ "data"');
  assert.equal(verifyAuditText(join1(copy)).broken!.reason, 'not_canonical');
  const r = JSON.parse(lines[2]);
  copy[1] = lines[1];
  copy[2] = JSON.stringify({ seq: r.seq, ...r });
  assert.equal(verifyAuditText(join1(copy)).broken!.reason, 'not_canonical');
});

test('torn last line: verify reports it; reopening cuts it, notes it, and the chain continues', () => {
  const { path, lines } = writeLog(3);
  appendFileSync(path, lines[2].slice(0, 40));
  const v = verifyAuditText(readFileSync(path));
  assert.equal([v.ok, v.verified, v.broken!.line, v.broken!.reason], [false, 4, 5, 'torn_tail']);
  const log = open(path);
  log.append('execution.started', { tool: 'echo', request_id: 'r9' });
  log.close();
  const after = readFileSync(path, 'utf8').split('\n').slice(0, -1).map((l) => JSON.parse(l));
  assert.equal(after.map((r) => [r.seq, r.kind]).slice(3), [
    [3, 'capability.requested'],
    [4, 'audit.opened'],
    [5, 'execution.started'],
  ]);
  assert.is(after[4].data.resumed, true);
  assert.is(after[4].data.torn_tail.bytes, 40);
  assert.match(after[4].data.torn_tail.sha256, /^[0-9a-f]{64}$/);
  assert.is(verifyAuditText(readFileSync(path)).ok, true);
});

test('a file of only a torn line restarts the chain from GENESIS', () => {
  const path = tmpFile();
  open(path).close();
  writeFileSync(path, '{"data":{},"ha');
  const log = open(path);
  log.close();
  const recs = readFileSync(path, 'utf8').split('\n').slice(0, -1).map((l) => JSON.parse(l));
  assert.equal(recs.map((r) => [r.seq, r.prev === GENESIS, r.data.torn_tail?.bytes]), [[0, true, 14]]);
});

test('restart continues the chain: seq and prev follow the last record across opens', () => {
  const path = tmpFile();
  for (let run = 0; run < 3; run++) {
    const log = open(path);
    log.append('protocol.received', { bytes: run });
    log.close();
  }
  const recs = readFileSync(path, 'utf8').split('\n').slice(0, -1).map((l) => JSON.parse(l));
  assert.equal(recs.map((r) => r.seq), [0, 1, 2, 3, 4, 5]);
  assert.equal(recs.filter((r) => r.kind === 'audit.opened').map((r) => r.data.resumed), [false, true, true]);
  assert.equal(verifyAuditText(readFileSync(path)).verified, 6);
});

test('reopening a long log reads only its tail (records larger than one 64 KiB chunk too)', () => {
  const path = tmpFile();
  const log = open(path);
  for (let i = 0; i < 30; i++) log.append('execution.finished', { result: 'x'.repeat(8000) + i });
  log.close();
  const again = open(path);
  assert.is(again.head!.seq, 31); // 0 opened, 1..30, 31 opened again
  again.close();
  assert.is(verifyAuditText(readFileSync(path)).ok, true);
});

test('a last complete record that was edited → the writer refuses to continue (corrupt)', () => {
  const { path, lines } = writeLog(2);
  const copy = [...lines];
  copy[2] = copy[2].replace('hello 2', 'hello 3');
  writeFileSync(path, join1(copy));
  try {
    open(path);
    assert.unreachable('opened a corrupt log');
  } catch (e) {
    assert.instance(e, AuditError);
    assert.is((e as AuditError).code, 'corrupt');
  }
});

test('secrets are redacted (keys and values, nested), lone surrogates made well-formed, big strings bounded', () => {
  const path = tmpFile();
  const r = new Redactor();
  r.add('sk-live-abcdef123456');
  const log = open(path, (s) => r.redact(s));
  log.append('capability.requested', { args: { token: 'Bearer sk-live-abcdef123456', nested: [{ 'sk-live-abcdef123456': 1 }] }, odd: 'a\ud800b', big: 'y'.repeat(9000) });
  log.close();
  const text = readFileSync(path, 'utf8');
  assert.not.ok(text.includes('sk-live-abcdef123456'));
  const rec = JSON.parse(text.split('\n')[1]);
  assert.equal(rec.data.args, { nested: [{ '[REDACTED]': 1 }], token: 'Bearer [REDACTED]' });
  assert.is(rec.data.odd, 'a\ufffdb');
  assert.is(rec.data.big, `${'y'.repeat(8192)}…[808 more chars]`);
  assert.is(verifyAuditText(readFileSync(path)).ok, true);
});

test('a failed write throws write_failed; the next append continues the chain once writes succeed (test/unit/audit-write-failure.test.ts)', () => {
  let fail = false;
  const written: string[] = [];
  const file: AuditFile = {
    tail: () => ({ torn: new Uint8Array(0), tornAt: 0 }),
    truncate() {},
    append(l) {
      if (fail) throw new Error('ENOSPC');
      written.push(l);
    },
    sync() {},
    close() {},
  };
  const log = AuditLog.open({ file, now: () => 0, redact: (s) => s });
  log.append('execution.started', {});
  fail = true;
  assert.throws(() => log.append('execution.finished', {}), (e: any) => e instanceof AuditError && e.code === 'write_failed');
  assert.throws(() => log.append('execution.finished', {}), (e: any) => e instanceof AuditError && e.code === 'write_failed');
  fail = false;
  // The outage's account (seq 2) comes first, then the record that got through.
  assert.is(log.append('execution.finished', {}).seq, 3);
  assert.equal(written.map((l) => JSON.parse(l).kind), ['audit.opened', 'execution.started', 'audit.outage', 'execution.finished']);
  log.close();
  assert.throws(() => log.append('execution.finished', {}), (e: any) => e.code === 'closed');
});

test('fsync policy: `record` syncs after each of the 3 records and at close, `none` only at close', () => {
  for (const [policy, expected] of [
    ['record', 4],
    ['none', 1],
  ] as const) {
    let syncs = 0;
    const file: AuditFile = { tail: () => ({ torn: new Uint8Array(0), tornAt: 0 }), truncate() {}, append() {}, sync: () => void syncs++, close() {} };
    const log = AuditLog.open({ file, now: () => 0, redact: (s) => s, fsync: policy });
    log.append('execution.started', {});
    log.append('execution.finished', {});
    log.close();
    assert.is(syncs, expected, policy);
  }
});

test.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test.run();
