// Retention by segment files (src/audit/segments.ts, node-segments.ts, log.ts rotation): the chain
// never restarts across files, expired segments are deleted whole, and verifying the directory
// reports where the kept history begins while still catching tampering in any kept segment.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditLog } from '../../src/audit/log.ts';
import { openAuditFile } from '../../src/audit/node-file.ts';
import { nodeAuditSegments, readAuditDirectory } from '../../src/audit/node-segments.ts';
import { closedSegmentName, expiredPrefix, parseSegmentName, segmentOrder, verifyAuditSegments } from '../../src/audit/segments.ts';
import { GENESIS } from '../../src/audit/record.ts';

const root = mkdtempSync(join(tmpdir(), 'claw-audit-seg-'));
let n = 0;
const T0 = Date.UTC(2026, 10, 22, 0, 0, 0);
const MIN = 60_000;

function setup(o: { maxAgeMs?: number; maxBytes?: number; retentionMs?: number } = {}) {
  const dir = join(root, `d${n++}`);
  let now = T0;
  const seg = nodeAuditSegments(dir, { maxAgeMs: o.maxAgeMs ?? 10 * MIN, maxBytes: o.maxBytes ?? 1 << 30, retentionMs: o.retentionMs });
  const open = () => AuditLog.open({ file: openAuditFile(join(dir, 'audit.jsonl')), now: () => now, redact: (s) => s, fsync: 'none', segments: seg });
  return { dir, open, tick: (ms: number) => (now += ms), lines: (name: string) => readFileSync(join(dir, name), 'utf8').split('\n').slice(0, -1) };
}

test('names: closed segments sort by first seq, the active file last; expiry of a prefix of the chain by the closing time in the name', () => {
  assert.is(closedSegmentName(42, T0), `audit-000000000042-${T0}.jsonl`);
  assert.equal(parseSegmentName(`audit-000000000042-${T0}.jsonl`), { firstSeq: 42, closedAtMs: T0 });
  assert.is(parseSegmentName('audit-42-1.jsonl'), undefined);
  const names = ['audit.jsonl', closedSegmentName(10, T0 + 5), 'notes.txt', closedSegmentName(2, T0 + 9)];
  assert.equal(segmentOrder(names), [closedSegmentName(2, T0 + 9), closedSegmentName(10, T0 + 5), 'audit.jsonl']);
  assert.equal(expiredPrefix(names, (ms) => ms < T0 + 10), { deleted: [closedSegmentName(2, T0 + 9), closedSegmentName(10, T0 + 5)] });
  // Only a prefix: an expired segment after a kept one stays (deleting it would break the chain).
  assert.equal(expiredPrefix(names, (ms) => ms < T0 + 6), { deleted: [], firstKeptSeq: 2 });
});

test('rotation: each new segment begins with audit.segment naming the closed one, and the directory verifies as one chain', () => {
  const s = setup();
  const log = s.open(); // seq 0 audit.opened at T0
  log.append('execution.finished', { request_id: 'a', outcome: 'ok' }); // 1
  s.tick(10 * MIN); // the active segment is now 10 min old
  log.append('execution.finished', { request_id: 'b', outcome: 'ok' }); // rotation: 2 audit.segment, 3
  s.tick(10 * MIN);
  log.append('execution.finished', { request_id: 'c', outcome: 'ok' }); // rotation: 4 audit.segment, 5
  log.close();
  const files = readdirSync(s.dir).sort();
  assert.equal(files, [closedSegmentName(0, T0 + 10 * MIN), closedSegmentName(2, T0 + 20 * MIN), 'audit.jsonl']);
  const first = s.lines(files[0]).map((l) => JSON.parse(l));
  const second = s.lines(files[1]).map((l) => JSON.parse(l));
  assert.equal(second[0].kind, 'audit.segment');
  assert.equal(second[0].prev, first[1].hash);
  assert.equal(second[0].data, { previous: { file: files[0], first_seq: 0, last_seq: 1, head: first[1].hash } });
  const r = verifyAuditSegments(readAuditDirectory(s.dir));
  const last = JSON.parse(s.lines('audit.jsonl')[1]);
  assert.equal(r, { ok: true, verified: 6, head: last.hash, segments: 3 });
});

test('retention: whole segments older than it are deleted; verify reports the boundary, not a break', () => {
  const s = setup({ maxAgeMs: 10 * MIN, retentionMs: 15 * MIN });
  const log = s.open();
  for (let i = 0; i < 4; i++) {
    s.tick(10 * MIN);
    log.append('execution.finished', { request_id: `r${i}`, outcome: 'ok' });
  }
  log.close();
  // seq 0 audit.opened; each later append rotates first: segments closed at +10, +20, +30, +40 min
  // beginning at seq 0, 1, 3, 5. Now +40, cutoff +25: the first two are gone.
  const files = readdirSync(s.dir).sort();
  assert.equal(files, [closedSegmentName(3, T0 + 30 * MIN), closedSegmentName(5, T0 + 40 * MIN), 'audit.jsonl']);
  const kept = s.lines(files[0]).map((l) => JSON.parse(l));
  const r = verifyAuditSegments(readAuditDirectory(s.dir));
  assert.equal(r.ok, true);
  assert.equal(r.verified, 6); // seq 3..8
  assert.equal(r.retained_from, { file: files[0], seq: 3, prev: kept[0].prev });
  assert.is.not(kept[0].prev, GENESIS);
  assert.equal(kept[0].data.previous.file, closedSegmentName(1, T0 + 20 * MIN));
});

test('reopening resumes the chain and ages the active segment from its first record', () => {
  const s = setup({ maxAgeMs: 10 * MIN });
  const a = s.open();
  a.close();
  s.tick(9 * MIN);
  const b = s.open(); // 9 min old: no rotation yet
  b.close();
  assert.equal(readdirSync(s.dir), ['audit.jsonl']);
  s.tick(MIN);
  const c = s.open(); // 10 min: audit.opened starts a new segment
  c.close();
  assert.equal(readdirSync(s.dir).sort(), [closedSegmentName(0, T0 + 10 * MIN), 'audit.jsonl']);
  assert.equal(s.lines('audit.jsonl').map((l) => JSON.parse(l).kind), ['audit.segment', 'audit.opened']);
  assert.equal(verifyAuditSegments(readAuditDirectory(s.dir)).verified, 4);
});

test('size-based rotation', () => {
  const s = setup({ maxBytes: 4096 });
  const log = s.open();
  for (let i = 0; i < 40; i++) log.append('execution.finished', { request_id: `r${i}`, outcome: 'ok', pad: 'x'.repeat(200) });
  log.close();
  const files = readdirSync(s.dir);
  assert.ok(files.length >= 3, files.join());
  for (const f of files) assert.ok(readFileSync(join(s.dir, f)).length < 4096 + 600, f);
  assert.equal(verifyAuditSegments(readAuditDirectory(s.dir)).verified, 41 + files.length - 1);
});

function threeSegments() {
  const s = setup({ maxAgeMs: 10 * MIN });
  const log = s.open();
  for (let i = 0; i < 2; i++) {
    log.append('execution.finished', { request_id: `x${i}`, outcome: 'ok' });
    s.tick(10 * MIN);
    log.append('execution.finished', { request_id: `y${i}`, outcome: 'ok' });
  }
  log.close();
  return { ...s, files: readdirSync(s.dir).sort() };
}

test('tampering in an older segment is still detected, naming the file and line', () => {
  const s = threeSegments();
  const lines = s.lines(s.files[0]);
  writeFileSync(join(s.dir, s.files[0]), lines.map((l) => `${l.replace('"x0"', '"x9"')}\n`).join(''));
  const r = verifyAuditSegments(readAuditDirectory(s.dir));
  assert.equal([r.ok, r.broken?.file, r.broken?.line, r.broken?.reason], [false, s.files[0], 2, 'hash_mismatch']);
});

test('a deleted middle segment, or records cut off the end of a closed one, break the link', () => {
  const s = threeSegments();
  rmSync(join(s.dir, s.files[1]));
  const r = verifyAuditSegments(readAuditDirectory(s.dir));
  assert.equal([r.ok, r.broken?.file, r.broken?.line, r.broken?.reason], [false, 'audit.jsonl', 1, 'prev_mismatch']);

  const t = threeSegments();
  const lines = t.lines(t.files[0]);
  writeFileSync(join(t.dir, t.files[0]), lines.slice(0, -1).map((l) => `${l}\n`).join(''));
  const q = verifyAuditSegments(readAuditDirectory(t.dir));
  assert.equal([q.ok, q.broken?.file, q.broken?.line, q.broken?.reason], [false, t.files[1], 1, 'prev_mismatch']);
});

test('a kept history may begin only at an audit.segment record: a file cut at an arbitrary record is a break', () => {
  const s = threeSegments();
  rmSync(join(s.dir, s.files[0]));
  assert.equal(verifyAuditSegments(readAuditDirectory(s.dir)).retained_from?.file, s.files[1]);
  const lines = s.lines(s.files[1]);
  writeFileSync(join(s.dir, s.files[1]), lines.slice(1).map((l) => `${l}\n`).join(''));
  const r = verifyAuditSegments(readAuditDirectory(s.dir));
  assert.equal([r.ok, r.broken?.file, r.broken?.line, r.broken?.reason], [false, s.files[1], 1, 'prev_mismatch']);
});

test('a crash between the rename and the first record: an empty (or missing) active file continues the closed chain', () => {
  const s = threeSegments();
  for (const damage of ['empty', 'missing'] as const) {
    if (damage === 'empty') writeFileSync(join(s.dir, 'audit.jsonl'), '');
    else rmSync(join(s.dir, 'audit.jsonl'));
    const closed = readdirSync(s.dir).filter((f) => f !== 'audit.jsonl').sort();
    const lastClosed = s.lines(closed.at(-1)!).map((l) => JSON.parse(l)).at(-1);
    const log = s.open();
    log.close();
    const active = s.lines('audit.jsonl').map((l) => JSON.parse(l));
    assert.equal(active.map((r) => r.kind), ['audit.segment', 'audit.opened']);
    assert.equal([active[0].prev, active[0].seq], [lastClosed.hash, lastClosed.seq + 1]);
    assert.equal(active[0].data.previous, { file: closed.at(-1), first_seq: parseSegmentName(closed.at(-1)!)!.firstSeq, last_seq: lastClosed.seq, head: lastClosed.hash });
    const r = verifyAuditSegments(readAuditDirectory(s.dir));
    assert.equal([r.ok, r.retained_from], [true, undefined]);
  }
});

test.after(() => rmSync(root, { recursive: true, force: true }));
test.run();
