// `claw audit verify` on a log with an `audit.outage` record (docs/audit.md "Outage record"): the
// chain is intact and the outage is shown — when, and how many calls were refused — in text and JSON.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLAW } from './helpers/claw-process.ts';
import { AuditLog, type AuditFile } from '../../src/audit/log.ts';
import { openAuditFile } from '../../src/audit/node-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'claw-audit-outage-verify-'));
const T0 = Date.UTC(2026, 10, 22);
const verify = (...args: string[]) => spawnSync(process.execPath, [CLAW, 'audit', 'verify', ...args], { encoding: 'utf8', cwd: dir });

test('an outage in the chain → exit 0, and the outage with its time span and refusals is printed', () => {
  const path = join(dir, 'audit.jsonl');
  const f = openAuditFile(path);
  let full = false;
  const file: AuditFile = {
    ...f,
    path,
    append(line) {
      if (full) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      f.append(line);
    },
  };
  let now = T0;
  const log = AuditLog.open({ file, now: () => (now += 1000), redact: (s) => s });
  full = true;
  for (const id of ['r1', 'r2', 'r3']) {
    assert.throws(() => log.append('capability.requested', { request_id: id, tool: 'echo' }));
    log.noteRefused({ kind: 'capability.requested', request_id: id, tool: 'echo', executed: false });
  }
  full = false;
  log.append('capability.requested', { request_id: 'r4', tool: 'echo' });
  log.close();
  const lines = readFileSync(path, 'utf8').split('\n').slice(0, -1);
  const outage = JSON.parse(lines[1]);
  const head = JSON.parse(lines[2]).hash;

  const r = verify(path);
  assert.is(r.status, 0, r.stderr);
  assert.is(r.stdout, `${path}: ok, 3 records, head ${head}\n1 audit outage (the log could not write; calls refused meanwhile: 3):\n  seq 1: ${outage.data.since} to ${outage.data.until}, 3 refused\n`);
  const j = JSON.parse(verify(path, '--json').stdout);
  assert.equal(j.outages, { count: 1, refused: 3, first: [{ seq: 1, line: 2, since: outage.data.since, until: outage.data.until, refused: 3 }] });
  // The directory form names the file.
  const d = verify(dir);
  assert.is(d.status, 0, d.stderr);
  assert.match(d.stdout, `  audit.jsonl seq 1: ${outage.data.since} to ${outage.data.until}, 3 refused\n`);
});

test.after(() => rmSync(dir, { recursive: true, force: true }));
test.run();
