// `claw audit verify` through dist/claw.mjs on logs written by the audit writer, then tampered.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, appendFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLAW } from './helpers/claw-process.ts';
import { AuditLog } from '../../src/audit/log.ts';
import { openAuditFile } from '../../src/audit/node-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'claw-audit-verify-'));
let n = 0;
function makeLog(records = 6): { path: string; lines: string[] } {
  const path = join(dir, `audit-${n++}.jsonl`);
  const log = AuditLog.open({ file: openAuditFile(path), now: () => Date.UTC(2026, 10, 22), redact: (s) => s });
  for (let i = 1; i < records; i++) log.append('execution.finished', { tool: 'echo', request_id: `r${i}`, outcome: 'ok' });
  log.close();
  return { path, lines: readFileSync(path, 'utf8').split('\n').slice(0, -1) };
}
const verify = (...args: string[]) => spawnSync(process.execPath, [CLAW, 'audit', 'verify', ...args], { encoding: 'utf8', cwd: dir });

test('an intact log → exit 0, record count and head', () => {
  const { path, lines } = makeLog();
  const r = verify(path);
  assert.is(r.status, 0, r.stderr);
  assert.is(r.stdout, `${path}: ok, 6 records, head ${JSON.parse(lines[5]).hash}\n`);
  const j = verify(path, '--json');
  assert.equal(JSON.parse(j.stdout), { ok: true, file: path, verified: 6, head: JSON.parse(lines[5]).hash });
});

test('a tampered byte in the middle → exit 1 naming that record', () => {
  const { path, lines } = makeLog();
  lines[3] = lines[3].replace('"r3"', '"r9"');
  writeFileSync(path, lines.map((l) => `${l}\n`).join(''));
  const r = verify(path);
  assert.is(r.status, 1);
  assert.is(r.stderr, `${path}:4: record seq 3 broken: hash_mismatch: content does not match its hash (edited)\n3 records verified before it\n`);
});

test('a deleted record and a reordered pair → exit 1 at the first record out of place', () => {
  const a = makeLog();
  writeFileSync(a.path, a.lines.filter((_, i) => i !== 2).map((l) => `${l}\n`).join(''));
  const r = JSON.parse(verify(a.path, '--json').stdout);
  assert.equal([r.ok, r.verified, r.broken.line, r.broken.seq, r.broken.reason], [false, 2, 3, 3, 'prev_mismatch']);
  const b = makeLog();
  [b.lines[1], b.lines[4]] = [b.lines[4], b.lines[1]];
  writeFileSync(b.path, b.lines.map((l) => `${l}\n`).join(''));
  const s = verify(b.path, '--json');
  assert.is(s.status, 1);
  assert.equal(JSON.parse(s.stdout).broken.line, 2);
});

test('a torn tail → exit 1 torn_tail; records cut off the end → only --expect-head notices', () => {
  const a = makeLog();
  appendFileSync(a.path, '{"data":');
  const r = JSON.parse(verify(a.path, '--json').stdout);
  assert.equal([r.ok, r.broken.line, r.broken.reason], [false, 7, 'torn_tail']);
  const b = makeLog();
  const head = JSON.parse(b.lines[5]).hash;
  writeFileSync(b.path, b.lines.slice(0, 4).map((l) => `${l}\n`).join(''));
  assert.is(verify(b.path).status, 0);
  const e = verify(b.path, '--expect-head', head);
  assert.is(e.status, 1);
  assert.match(e.stderr, /records were cut off the end/);
});

test('usage and unreadable files', () => {
  assert.is(verify().status, 2);
  assert.is(verify('a', 'b').status, 2);
  assert.is(verify(join(dir, 'x'), '--expect-head', 'zz').status, 2);
  const missing = verify(join(dir, 'missing.jsonl'));
  assert.is(missing.status, 1);
  assert.match(missing.stderr, /cannot be read \(ENOENT\)/);
});

test.after(() => rmSync(dir, { recursive: true, force: true }));
test.run();
