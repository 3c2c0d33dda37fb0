// Run records (src/sandbox/run-records.ts) and the start-up sweep (src/sandbox/orphans.ts): the
// format, the pid-reuse checks (on tables and on real processes), and that the launcher records a
// run before its tool may start.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { detectHost, type HostCapabilities } from '../../src/sandbox/host.ts';
import { orphansOf, sweepOrphans, type SweepDeps } from '../../src/sandbox/orphans.ts';
import { parseProcStat, readProc, type ProcInfo } from '../../src/sandbox/proc-table.ts';
import {
  currentOwner,
  ownerDirName,
  parseOwnerDirName,
  parseRecordName,
  readRecords,
  recordName,
  runRecords,
  type Owner,
  type RunRecords,
} from '../../src/sandbox/run-records.ts';
import { runSandboxed } from '../../src/sandbox/runner.ts';
import { spawnSandboxed } from '../../src/sandbox/spawn.ts';
import { without } from '../fixtures/sandbox/helpers.ts';

const roots: string[] = [];
const tempRoot = () => {
  const d = mkdtempSync(join(tmpdir(), 'claw-records-'));
  roots.push(d);
  return d;
};
const started: number[] = [];
test.after(() => {
  for (const p of started) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      // gone
    }
  }
  for (const d of roots) rmSync(d, { recursive: true, force: true });
});

const proc = (pid: number, start: number, o: Partial<ProcInfo> = {}): ProcInfo => ({ pid, ppid: 1, pgid: pid, sid: pid, start, zombie: false, ...o });

test('record names: empty files whose name is the record; nothing else parses', () => {
  const owner: Owner = { boot: '6e9107ed', pid: 4242, start: 123456 };
  assert.is(ownerDirName(owner), '6e9107ed-4242-123456');
  assert.equal(parseOwnerDirName('6e9107ed-4242-123456'), owner);
  assert.is(recordName({ kind: 'process', pid: 31000, start: 98765 }), 'p31000.98765');
  assert.equal(parseRecordName('p31000.98765'), { kind: 'process', pid: 31000, start: 98765 });
  assert.is(recordName({ kind: 'cgroup', name: 'run-4242-3-mfx1a2b3' }), 'crun-4242-3-mfx1a2b3');
  assert.equal(parseRecordName('crun-4242-3-mfx1a2b3'), { kind: 'cgroup', name: 'run-4242-3-mfx1a2b3' });
  for (const bad of ['p1', 'p1.x', 'p-1.2', 'crun-1-2-../x', 'c../../system.slice', 'crun-1-2-A', 'cgroup-base', 'x', '']) assert.is(parseRecordName(bad), undefined, bad);
  for (const bad of ['6e9107ed-1', 'zz9107ed-1-2', '6e9107ed-1-2-3', '../6e9107ed-1-2']) assert.is(parseOwnerDirName(bad), undefined, bad);
});

test('runRecords: one empty file per run, removed by its drop function; one cgroup base per runtime', () => {
  const root = tempRoot();
  const owner: Owner = { boot: 'abcdef01', pid: 99999, start: 5 };
  const r = runRecords(root, owner);
  const dropP = r.add({ kind: 'process', pid: 1234, start: 777 });
  const dropC = r.add({ kind: 'cgroup', name: 'run-99999-1-abc' }, '/sys/fs/cgroup/pids/claw-edge');
  const dir = join(root, 'abcdef01-99999-5');
  assert.equal(readdirSync(dir).sort(), ['cgroup-base', 'crun-99999-1-abc', 'p1234.777']);
  assert.is(statSync(join(dir, 'p1234.777')).size, 0, 'no data block: the name is the record');
  assert.is(statSync(dir).mode & 0o777, 0o700);
  const [read] = readRecords(root);
  assert.equal({ ...read, records: read.records.map(recordName).sort() }, { owner, dir, cgroupBase: '/sys/fs/cgroup/pids/claw-edge', records: ['crun-99999-1-abc', 'p1234.777'], unknown: [] });
  dropP!();
  dropC!();
  dropP!(); // twice is harmless
  assert.equal(readdirSync(dir), ['cgroup-base']);
  assert.is(r.add({ kind: 'cgroup', name: 'run-99999-2-abc' }, '/elsewhere/claw-edge'), undefined, 'one cgroup base per runtime');
});

test('readRecords: a directory others can write to, or a symlink, is not trusted', () => {
  const root = tempRoot();
  mkdirSync(join(root, 'abcdef01-11-1'));
  writeFileSync(join(root, 'abcdef01-11-1', 'p5.5'), '');
  chmodSync(join(root, 'abcdef01-11-1'), 0o777);
  mkdirSync(join(root, 'abcdef01-12-1'), { mode: 0o700 });
  writeFileSync(join(root, 'abcdef01-12-1', 'p6.6'), '');
  assert.equal(readRecords(root).map((o) => o.owner.pid), [12]);
});

test('orphansOf: the recorded process, its group and session, and their descendants', () => {
  const r = { kind: 'process' as const, pid: 100, start: 5000 };
  const table = [
    proc(100, 5000), // the tool (sh), group and session leader
    proc(101, 5001, { ppid: 100, pgid: 100, sid: 100 }), // sleep in the group
    proc(102, 5001, { ppid: 100, pgid: 102, sid: 102 }), // setsid child, parent alive
    proc(103, 5002, { ppid: 102, pgid: 102, sid: 102 }), // its child
    proc(104, 5003, { ppid: 1, pgid: 104, sid: 100 }), // left the group, still in the session
    proc(200, 4000, { ppid: 1 }), // unrelated
    proc(105, 5004, { ppid: 100, pgid: 100, sid: 100, zombie: true }),
  ];
  assert.equal(orphansOf(r, table, new Set()).map((p) => p.pid).sort(), [100, 101, 102, 103, 104]);
  assert.equal(orphansOf(r, table, new Set([103])).map((p) => p.pid).sort(), [100, 101, 102, 104], 'protected pids are never returned');
});

test('orphansOf: a reused pid is not the run, and neither is its group or session', () => {
  const r = { kind: 'process' as const, pid: 100, start: 5000 };
  // pid 100 belongs to a newer process now: nothing of the run can still use the id 100.
  const reused = [proc(100, 9000), proc(101, 9001, { ppid: 100, pgid: 100, sid: 100 })];
  assert.equal(orphansOf(r, reused, new Set()), []);
  // Leader gone: group members started before the run cannot be its processes.
  const older = [proc(300, 4000, { pgid: 100, sid: 100 }), proc(301, 5100, { pgid: 100, sid: 100 })];
  assert.equal(orphansOf(r, older, new Set()).map((p) => p.pid), [301]);
  assert.equal(orphansOf(r, [proc(100, 5000, { zombie: true }), proc(101, 5001, { pgid: 100 })], new Set()).map((p) => p.pid), [101], 'zombie leader: its group still is the run');
});

test('orphansOf: a record naming pid 1, the runtime or its ancestors, or a process that leads no session of its own, yields nothing', () => {
  const table = [
    proc(1, 10, { ppid: 0, pgid: 1, sid: 1 }),
    proc(50, 20, { ppid: 1, pgid: 50, sid: 50 }), // sshd
    proc(60, 30, { ppid: 50, pgid: 60, sid: 60 }), // the operator's shell
    proc(70, 40, { ppid: 60, pgid: 70, sid: 60 }), // this runtime
    proc(80, 50, { ppid: 1, pgid: 80, sid: 80 }), // an unrelated daemon
    proc(81, 60, { ppid: 80, pgid: 80, sid: 80 }),
    proc(90, 70, { ppid: 60, pgid: 90, sid: 60 }), // a job of the shell: no session of its own
  ];
  const protect = new Set([0, 1, 70, 60, 50]);
  for (const pid of [1, 50, 60, 70]) assert.equal(orphansOf({ kind: 'process', pid, start: table.find((p) => p.pid === pid)!.start }, table, protect), [], `pid ${pid}`);
  assert.equal(orphansOf({ kind: 'process', pid: 90, start: 70 }, table, protect), []);
  assert.equal(orphansOf({ kind: 'process', pid: 80, start: 50 }, table, protect).map((p) => p.pid), [80, 81], 'a session leader with the right start time is still swept');
});

test('sweepOrphans: live owners are left alone, another boot is only removed, start times are checked again before each signal', async () => {
  const root = tempRoot();
  const self: Owner = { boot: 'aaaaaaaa', pid: 50, start: 10 };
  const make = (o: Owner, files: string[]) => {
    const d = join(root, ownerDirName(o));
    mkdirSync(d, { mode: 0o700 });
    for (const f of files) writeFileSync(join(d, f), '');
  };
  make({ boot: 'aaaaaaaa', pid: 60, start: 20 }, ['p70.30']); // live runtime (pid 60, start 20)
  make({ boot: 'bbbbbbbb', pid: 61, start: 20 }, ['p71.30']); // another boot
  make({ boot: 'aaaaaaaa', pid: 62, start: 20 }, ['p72.30', 'p80.30']); // dead: pid 62 is gone
  let table = [proc(60, 20), proc(70, 30), proc(71, 30), proc(72, 30), proc(73, 31, { ppid: 72, pgid: 72, sid: 72 }), proc(80, 30)];
  const signals: string[] = [];
  const deps: Partial<SweepDeps> = {
    self,
    procs: () => table,
    // pid 80 was recorded with start 30, but by the time it is signalled it is another process.
    proc: (pid) => (pid === 80 && signals.length > 0 ? proc(80, 99) : table.find((p) => p.pid === pid)),
    signal: (pid, sig) => {
      signals.push(`${sig}:${pid}`);
      if (sig === 'SIGKILL') table = table.filter((p) => p.pid !== pid);
    },
    killCgroup: async () => 0,
  };
  const rep = await sweepOrphans(root, deps);
  assert.equal(rep, { runtimes: 2, killed: 2 });
  assert.equal(signals.sort(), ['SIGKILL:72', 'SIGKILL:73', 'SIGSTOP:72', 'SIGSTOP:73'], 'stopped, then killed; 70 (live owner), 71 (other boot) and reused 80 untouched');
  assert.equal(readdirSync(root), [ownerDirName({ boot: 'aaaaaaaa', pid: 60, start: 20 })]);
});

test('sweepOrphans on real processes: a record with the right start time kills, a stale one does not', async () => {
  const root = tempRoot();
  const spawnSleep = () => {
    const c = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
    started.push(c.pid!);
    return { pid: c.pid!, start: readProc(c.pid!)!.start, child: c };
  };
  const a = spawnSleep();
  const b = spawnSleep();
  const dead: Owner = { ...currentOwner(), pid: 2 ** 22 + 7, start: 1 }; // a pid above pid_max: never alive
  const d = join(root, ownerDirName(dead));
  mkdirSync(d, { mode: 0o700 });
  writeFileSync(join(d, `p${a.pid}.${a.start}`), '');
  writeFileSync(join(d, `p${b.pid}.${b.start + 1}`), ''); // b's pid, another start time: a reused pid
  const gone = new Promise((r) => a.child.once('exit', r));
  const rep = await sweepOrphans(root);
  assert.is(rep.killed, 1);
  await gone;
  assert.is(readProc(b.pid)?.start, b.start, 'the process whose start time does not match lives');
  process.kill(b.pid, 'SIGKILL');
  assert.not.ok(existsSync(d));
});

test('parseProcStat: comm with spaces and parentheses', () => {
  const p = parseProcStat('4242 (a) b (c)) S 1 4242 4242 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 987654 0 0');
  assert.equal(p, { pid: 4242, zombie: false, ppid: 1, pgid: 4242, sid: 4242, start: 987654 });
  assert.is(readProc('self')?.pid, process.pid);
});

let host: HostCapabilities;
test.before(async () => {
  host = await detectHost();
});

test('launch: without bubblewrap or cgroup the tool starts only once its record exists, which goes when the run is reaped', async () => {
  const root = tempRoot();
  const flag = join(root, 'ran');
  const real = runRecords(join(root, 'runs'), { boot: 'abcdef01', pid: process.pid, start: 1 });
  let sawBefore: boolean | undefined;
  let recorded: string[] = [];
  const records: RunRecords = {
    root: real.root,
    add(r, base) {
      // Give the tool time to run if it were not held: it must not have touched the flag yet.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
      sawBefore = existsSync(flag);
      const drop = real.add(r, base);
      recorded = readdirSync(join(real.root, 'abcdef01-' + process.pid + '-1'));
      return drop;
    },
  };
  const plain = without(host, 'bwrap', 'cgroup');
  const res = await runSandboxed({ bin: 'sh', argv: ['-c', `touch ${flag}`], env: { PATH: '/usr/bin:/bin' }, sandbox: { level: 'process' }, host: plain, allowDowngrade: { bubblewrap: 'none' }, records });
  assert.is(res.exitCode, 0, res.stderr);
  assert.is(sawBefore, false, 'the tool waited for its record');
  assert.ok(existsSync(flag), 'and then ran');
  assert.is(recorded.length, 1);
  assert.match(recorded[0], /^p\d+\.\d+$/);
  assert.equal(readdirSync(join(real.root, 'abcdef01-' + process.pid + '-1')), [], 'record removed after the run');
});

test('spawnSandboxed: the record names the running process (or its cgroup) until it is killed', async () => {
  const variants: [string, HostCapabilities][] = [['plain', without(host, 'bwrap', 'cgroup')]];
  if (host.cgroup.support) variants.push(['cgroup', without(host, 'bwrap')]);
  for (const [name, h] of variants) {
    const root = tempRoot();
    const records = runRecords(root, { boot: 'abcdef01', pid: process.pid, start: 2 });
    const p = await spawnSandboxed({ bin: 'sleep', argv: ['30'], env: { PATH: '/usr/bin:/bin' }, sandbox: { level: 'process' }, host: h, allowDowngrade: { bubblewrap: 'none' }, records, graceMs: 100 });
    const dir = join(root, `abcdef01-${process.pid}-2`);
    const files = readdirSync(dir).filter((f) => f !== 'cgroup-base');
    if (name === 'plain') assert.equal(files, [`p${p.pid}.${readProc(p.pid)!.start}`]);
    else assert.match(files[0], /^crun-/);
    await p.kill();
    assert.equal(readdirSync(dir).filter((f) => f !== 'cgroup-base'), [], name);
  }
  // Under bubblewrap nothing is recorded: the pid namespace dies with the runtime.
  if (host.bwrap.works) {
    const root = tempRoot();
    const records = runRecords(root, { boot: 'abcdef01', pid: process.pid, start: 3 });
    const p = await spawnSandboxed({ bin: 'sleep', argv: ['30'], env: { PATH: '/usr/bin:/bin' }, sandbox: { level: 'process' }, host: without(host, 'cgroup'), records, graceMs: 100 });
    assert.equal(readdirSync(root), []);
    await p.kill();
  }
});

test.run();
