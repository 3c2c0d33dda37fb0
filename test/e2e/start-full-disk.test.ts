// `claw run --start` with its data directory full (src/cli/start-when-writable.ts, docs/boards.md): the audit
// log cannot take its first record, so the session waits for space instead of exiting into a supervisor's
// restart loop, and starts by itself once space is freed. A real tmpfs, filled to the last byte, in a private
// mount namespace; the filler is removed from inside it when the test says so.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, startClaw, type ClawRun } from './helpers/claw-process.ts';
import { sleep, stderrRecords } from './helpers/e2e-util.ts';

const dirs: string[] = [];
const live: ClawRun[] = [];
/** Trigger files: written at the end too, so no watcher outlives the test. */
const frees: string[] = [];
const canMount = spawnSync('unshare', ['-m', 'sh', '-c', 'd=$(mktemp -d) && mount -t tmpfs -o size=64k tmpfs "$d" && umount "$d"; r=$?; rmdir "$d"; exit $r']).status === 0;

/** The README's chat agent with an audit policy: its session cannot start without an audit record. */
function auditedAgent(dataDir: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'claw-e2e-start-full-'));
  dirs.push(dir);
  const src = join(ROOT, 'examples', 'chat');
  const manifest = readFileSync(join(src, 'claw.yaml'), 'utf8');
  const withAudit = manifest.replace(/( +)- \{ id: "writes-need-approval".*\n/, (line, indent: string) => `${line}${indent.slice(2)}audit: { log_inputs: false, destination: "file" }\n`);
  assert.ok(withAudit !== manifest, 'the audit policy was added');
  writeFileSync(join(dir, 'claw.yaml'), withAudit);
  writeFileSync(join(dir, 'offline-rules.yaml'), readFileSync(join(src, 'offline-rules.yaml')));
  writeFileSync(join(dir, 'claw.runtime.yaml'), `data_dir: ${dataDir}\n`);
  return dir;
}

const waitForLog = async (c: ClawRun, msg: string, ms: number) => {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const r = stderrRecords(c.stderr()).find((x) => x.msg === msg);
    if (r) return r;
    await sleep(100);
  }
  assert.unreachable(`no "${msg}" within ${ms} ms; stderr:\n${c.stderr().slice(-3000)}`);
};

test('a full data directory at --start: the session waits, logs why once, and starts when space is freed', async () => {
  if (!canMount) {
    console.log('  SKIPPED --start on a full disk: cannot mount a tmpfs in a private mount namespace here (needs root or user namespaces); test/unit/start-when-writable covers the wait');
    return;
  }
  const ws = mkdtempSync(join(tmpdir(), 'claw-e2e-start-full-ws-'));
  dirs.push(ws);
  const data = join(ws, 'data');
  mkdirSync(data);
  const free = join(ws, 'free');
  const agent = auditedAgent(data);
  // Inside the namespace: the tmpfs, filled; a watcher that removes the filler once `free` exists.
  const wrap = [
    'unshare', '-m', 'sh', '-c',
    `mount -t tmpfs -o size=128k tmpfs '${data}' && (dd if=/dev/zero of='${data}/filler' bs=4k 2>/dev/null; true) && ` +
      // Its stdio is not the agent's (a holder of the pipes would keep the test waiting) and it gives up after 60 s.
      `(i=0; while [ ! -e '${free}' ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; rm -f '${data}/filler') </dev/null >/dev/null 2>&1 & exec "$0" "$@"`,
  ];
  const c = startClaw(['run', join(agent, 'claw.yaml'), '--start'], { cwd: agent, wrap });
  live.push(c);
  frees.push(free);
  const waiting = await waitForLog(c, 'session start waits for space in the data directory', 15_000);
  assert.match(waiting.error, /ENOSPC/);
  assert.is(waiting.retry_in_ms, 5000);
  const status = await c.request('claw.status', {}, 'st1');
  assert.ok(status.result ?? status.error, 'still answering while it waits');
  assert.not.equal(status.result?.state, 'READY');
  assert.is(c.child.exitCode, null, 'not exited: a supervisor would restart it until its start limit');

  writeFileSync(free, '');
  const started = await waitForLog(c, 'session started: the data directory takes writes again', 15_000);
  assert.ok(started.attempts >= 2);
  const ready = await c.request('claw.status', {}, 'st2');
  assert.is(ready.result?.state, 'READY', JSON.stringify(ready));
  assert.is(stderrRecords(c.stderr()).filter((x) => x.msg === 'session start waits for space in the data directory').length, 1, 'told once');
  assert.not.ok(stderrRecords(c.stderr()).some((x) => x.msg === 'session could not start'));
  // The refused starts are in the chain: one audit.outage before the audit.opened of the start that worked. The
  // tmpfs exists only in the agent's mount namespace: read through /proc/<pid>/root (unshare exec'ed claw).
  const log = readFileSync(`/proc/${c.child.pid}/root${data}/audit/audit.jsonl`, 'utf8').split('\n').slice(0, -1).map((l) => JSON.parse(l));
  assert.equal(log.slice(0, 2).map((r) => r.kind), ['audit.outage', 'audit.opened'], JSON.stringify(log.slice(0, 2)));
  assert.is(log[0].data.refused, started.attempts - 1);
  assert.ok(log[0].data.calls.every((x: { record: string }) => x.record === 'audit.opened'));
  assert.is(await c.end(), 0);
});

test('a start failure that space does not cure (a corrupt audit log) still exits 1 at once', async () => {
  const ws = mkdtempSync(join(tmpdir(), 'claw-e2e-start-corrupt-'));
  dirs.push(ws);
  const data = join(ws, 'data');
  mkdirSync(join(data, 'audit'), { recursive: true });
  // A last record that is not intact: the log refuses to open (`audit:corrupt`), which no wait repairs.
  writeFileSync(join(data, 'audit', 'audit.jsonl'), '{"seq":0,"kind":"audit.opened","hash":"00"}\n');
  const agent = auditedAgent(data);
  const c = startClaw(['run', join(agent, 'claw.yaml'), '--start'], { cwd: agent });
  live.push(c);
  const exit = await Promise.race([c.exited, sleep(15_000).then(() => undefined)]);
  assert.ok(exit, `exited; stderr:\n${c.stderr().slice(-2000)}`);
  assert.is(exit!.code, 1);
  const failed = stderrRecords(c.stderr()).find((x) => x.msg === 'session could not start');
  assert.match(failed?.error ?? '', /not intact/);
  assert.ok(existsSync(join(data, 'audit', 'audit.jsonl')));
});

test.after(() => {
  for (const f of frees) writeFileSync(f, '');
  for (const c of live) c.kill();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
test.run();
