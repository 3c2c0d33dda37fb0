// Audit segments and retention across wall-clock steps (src/audit/log.ts, src/kernel/wall-age.ts; docs/boards.md
// "Clock"): a board without an RTC writes its first records stamped 1970 (or fake-hwclock's last save) and
// steps to the real time when NTP answers. Retention must not delete what was written minutes ago.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditLog } from '../../src/audit/log.ts';
import { openAuditFile } from '../../src/audit/node-file.ts';
import { nodeAuditSegments, readAuditDirectory } from '../../src/audit/node-segments.ts';
import { parseSegmentName, verifyAuditSegments } from '../../src/audit/segments.ts';

const root = mkdtempSync(join(tmpdir(), 'claw-audit-jump-'));
const MIN = 60_000;
const NOW = Date.UTC(2026, 11, 7, 8, 0, 0);
let n = 0;

function setup(wall: number) {
  const dir = join(root, `d${n++}`);
  const c = { wall, mono: 1_000 };
  const keptFrom: number[] = [];
  const seg = nodeAuditSegments(dir, { maxAgeMs: 5 * MIN, maxBytes: 1 << 30, retentionMs: 15 * MIN });
  const log = AuditLog.open({
    file: openAuditFile(join(dir, 'audit.jsonl')),
    now: () => c.wall,
    monotonic: () => c.mono,
    redact: (s) => s,
    fsync: 'none',
    segments: seg,
    sink: { write() {}, pruned: (seq) => void keptFrom.push(seq) },
  });
  let i = 0;
  const append = () => log.append('execution.finished', { request_id: `r${i++}`, outcome: 'ok' });
  const tick = (ms: number) => void ((c.wall += ms), (c.mono += ms));
  const closed = () => readdirSync(dir).filter((f) => f !== 'audit.jsonl').sort();
  return { dir, c, log, append, tick, closed, keptFrom };
}

test('booted at 1970, NTP steps forward 56 years: segments closed minutes ago are kept, older ones still go', () => {
  const s = setup(10_000);
  for (let t = 0; t < 4; t++) {
    s.tick(5 * MIN);
    s.append(); // rotates: segments closed at 1970 + 5, 10, 15, 20 min
  }
  assert.is(s.closed().length, 4);
  s.tick(MIN / 2);
  s.c.wall = NOW; // the step
  s.tick(MIN / 2);
  s.append(); // looks at the clock (the log notes the step)
  s.tick(5 * MIN);
  s.append(); // rotates at +26 min and prunes: closed 21 and 16 min ago go, 11 and 6 min ago stay
  s.log.close();
  const closedAt = s.closed().map((f) => parseSegmentName(f)!.closedAtMs);
  assert.is(closedAt.length, 3, s.closed().join());
  assert.ok(closedAt.filter((ms) => ms < NOW).length === 2, 'the two pre-step segments younger than the retention are kept');
  // The mirror keeps what the files keep: it drops the rows below the oldest kept segment's first seq.
  assert.is(s.keptFrom.at(-1), parseSegmentName(s.closed()[0])!.firstSeq);
  assert.equal(verifyAuditSegments(readAuditDirectory(s.dir)).ok, true);
});

test('the wall clock set back a year: segments still rotate by age and retention still deletes', () => {
  const s = setup(NOW);
  s.tick(5 * MIN);
  s.append(); // closed at +5
  s.c.wall -= 365 * 86_400_000;
  for (let t = 0; t < 5; t++) {
    s.tick(5 * MIN);
    s.append();
  }
  s.log.close();
  // Rotated at +10 … +30 (5 more); retention 15 min at +30: the segments closed at +5 and +10 are gone.
  const files = s.closed();
  assert.is(files.length, 4, files.join());
  assert.not.ok(files.some((f) => parseSegmentName(f)!.closedAtMs === NOW + 5 * MIN), 'the pre-step segment is pruned');
});

test('after a restart, a segment stamped at 1970 kept (age unknown) keeps every later one: retention deletes only a prefix of the chain', () => {
  const s = setup(10_000);
  s.tick(5 * MIN);
  s.append(); // rotates: the first segment, closed at 1970
  s.c.wall = NOW; // NTP
  s.tick(5 * MIN);
  s.append(); // rotates: the second, closed at NOW + 5 min
  s.log.close();
  const before = s.closed();
  assert.is(before.length, 2);
  s.tick(20 * MIN); // off for 20 min: by the wall clock the second segment is 25 min old, the first of unknown age
  const seg = nodeAuditSegments(s.dir, { maxAgeMs: 5 * MIN, maxBytes: 1 << 30, retentionMs: 15 * MIN });
  const open = () => AuditLog.open({ file: openAuditFile(join(s.dir, 'audit.jsonl')), now: () => s.c.wall, monotonic: () => s.c.mono, redact: (x) => x, fsync: 'none', segments: seg });
  const b = open(); // prunes at open
  const kept = s.closed();
  assert.ok(before.every((f) => kept.includes(f)), `the 1970 segment is kept, so the one after it is too: ${kept.join()}`);
  const v = verifyAuditSegments(readAuditDirectory(s.dir));
  assert.ok(v.ok, JSON.stringify(v.broken));
  s.tick(16 * MIN);
  b.append('execution.finished', { request_id: 'later', outcome: 'ok' }); // rotates and prunes: uptime 16 min
  b.close();
  const left = s.closed().map((f) => parseSegmentName(f)!.closedAtMs);
  assert.ok(left.every((ms) => ms > NOW + 30 * MIN), `both old segments went once this process ran the retention: ${s.closed().join()}`);
  assert.ok(verifyAuditSegments(readAuditDirectory(s.dir)).ok);
});

test.after(() => rmSync(root, { recursive: true, force: true }));
test.run();
