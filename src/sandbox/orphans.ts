// The start-up sweep: kill what the tool runs of a dead runtime left running (records: run-records.ts).
// A runtime killed mid-call (SIGKILL, the OOM killer) cannot stop its tools; without bubblewrap they
// outlive it, setsid() descendants included. The next runtime on the same data directory, at STARTING:
//   - c-records: the run's cgroup holds every process of the tool, setsid or not: cgroup v2
//     `cgroup.kill`, else SIGKILL to each pid in `cgroup.procs` until it is empty, then rmdir;
//   - p-records: the recorded process (pid + start time), its process group and session (same id: it
//     was spawned detached), and every live descendant of those. Each is stopped (SIGSTOP: a stopped
//     process cannot fork, so the scan converges) and then killed with SIGKILL.
// Pid reuse: a process is signalled only after its start time is read again and matches; the recorded
// process must match its start time exactly, and a process found through the group or session must
// have started no earlier than it. If the recorded pid is alive with another start time, its number
// was handed out again, which the kernel does only when no group or session of that id is left, so
// nothing is taken from that record. What a p-record cannot find: a descendant that left both the
// group and the session and whose parent chain to the recorded process is broken (its parent exited
// before the sweep). A cgroup finds it.
import * as nodeFs from 'node:fs';
import { readFileSync, rmSync, rmdirSync, writeFileSync } from 'node:fs';
import { isAbsolute, normalize } from 'node:path';
import { readProc, readProcTable, type ProcInfo } from './proc-table.ts';
import { cgroupDirOf, currentOwner, readRecords, type Owner, type RunRecord } from './run-records.ts';

export interface SweepDeps {
  procs(): ProcInfo[];
  proc(pid: number): ProcInfo | undefined;
  signal(pid: number, sig: 'SIGSTOP' | 'SIGKILL'): void;
  /** Kill every member of a run cgroup; resolves with how many pids it saw. */
  killCgroup(dir: string): Promise<number>;
  self: Owner;
}

export interface SweepReport {
  /** Owner directories of dead runtimes that were swept (or dropped: another boot). */
  runtimes: number;
  /** Processes signalled with SIGKILL (p-records) or seen in a cgroup (c-records). */
  killed: number;
}

type ProcessRecord = Extract<RunRecord, { kind: 'process' }>;

/**
 * The live processes that belong to the run `r` in `table` (pure: the unit tests give it tables).
 * `protect`: pids never to touch (the sweeping runtime and its ancestors).
 */
export function orphansOf(r: ProcessRecord, table: readonly ProcInfo[], protect: ReadonlySet<number>): ProcInfo[] {
  const live = table.filter((p) => !p.zombie);
  const leader = table.find((p) => p.pid === r.pid);
  if (leader && leader.start !== r.start) return []; // the pid was reused: group and session r.pid are not the run's
  // A record is a name in a directory, not proof: pid 1, this runtime or one of its ancestors was never a tool
  // of a dead runtime (following its descendants would take the whole machine), and a tool was spawned
  // detached, so it leads its own session for life (setsid() cannot be undone): a live leader of another
  // session is not the recorded run.
  if (protect.has(r.pid) || (leader && leader.sid !== r.pid)) return [];
  const found = new Map<number, ProcInfo>();
  for (const p of live) {
    if (p.pid === r.pid || ((p.pgid === r.pid || p.sid === r.pid) && p.start >= r.start)) found.set(p.pid, p);
  }
  // Descendants through parent links (a setsid child whose parent still lives): to a fixed point.
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of live) {
      const parent = found.get(p.ppid);
      if (!found.has(p.pid) && parent && p.start >= parent.start) {
        found.set(p.pid, p);
        grew = true;
      }
    }
  }
  return [...found.values()].filter((p) => !protect.has(p.pid));
}

/** This process and its ancestors: never signalled, whatever a record says. */
function protectedPids(proc: SweepDeps['proc'], self: number): Set<number> {
  const out = new Set<number>([0, 1]);
  for (let pid = self, i = 0; pid > 1 && i < 64; i++) {
    out.add(pid);
    pid = proc(pid)?.ppid ?? 0;
  }
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function sweepProcesses(records: ProcessRecord[], d: SweepDeps, protect: Set<number>): Promise<number> {
  const stopped = new Map<number, number>(); // pid → start time
  const verified = (p: { pid: number; start: number }) => d.proc(p.pid)?.start === p.start;
  // Stop everything found, scan again (a process forked before it was stopped shows up now), until a
  // scan finds nothing new; bounded, for a tree that keeps growing faster than we scan.
  for (let round = 0; round < 50; round++) {
    const table = d.procs();
    const fresh = records.flatMap((r) => orphansOf(r, table, protect)).filter((p) => !stopped.has(p.pid));
    if (fresh.length === 0) break;
    for (const p of fresh) {
      if (!verified(p)) continue;
      d.signal(p.pid, 'SIGSTOP');
      stopped.set(p.pid, p.start);
    }
  }
  let killed = 0;
  for (const [pid, start] of stopped) {
    if (!verified({ pid, start })) continue;
    d.signal(pid, 'SIGKILL');
    killed++;
  }
  return killed;
}

/**
 * A cgroup base is followed only when it is a cgroup filesystem directory of ours (`…/claw-edge`):
 * a record must not be able to point the sweep at another group's member list.
 */
function trustedCgroupBase(base: string | undefined): base is string {
  if (!base || !isAbsolute(base) || normalize(base) !== base || !base.endsWith('/claw-edge')) return false;
  // statfsSync: Node ≥ 18.15; a named import of it would fail to link on older ones.
  const statfs = (nodeFs as { statfsSync?: (p: string) => { type: number } }).statfsSync;
  if (typeof statfs !== 'function') return base.startsWith('/sys/fs/cgroup/');
  try {
    const type = statfs(base).type;
    return type === 0x27e0eb || type === 0x63677270; // CGROUP_SUPER_MAGIC, CGROUP2_SUPER_MAGIC
  } catch {
    return false;
  }
}

/** Sweep every record under `root` whose runtime is gone. Never throws; signals only what it verified. */
export async function sweepOrphans(root: string, deps: Partial<SweepDeps> = {}): Promise<SweepReport> {
  const d: SweepDeps = { procs: readProcTable, proc: readProc, signal: signalQuietly, killCgroup: killCgroupDir, self: currentOwner(), ...deps };
  const report: SweepReport = { runtimes: 0, killed: 0 };
  const protect = protectedPids(d.proc, d.self.pid);
  for (const o of readRecords(root)) {
    const sameBoot = o.owner.boot === d.self.boot;
    if (sameBoot && o.owner.pid === d.self.pid) continue; // ours
    if (sameBoot && d.proc(o.owner.pid)?.start === o.owner.start) continue; // a live runtime on the same data directory
    report.runtimes++;
    // Another boot: nothing of it is running, the records are only removed.
    if (sameBoot) {
      const procs = o.records.filter((r): r is ProcessRecord => r.kind === 'process');
      if (procs.length > 0) report.killed += await sweepProcesses(procs, d, protect);
      if (trustedCgroupBase(o.cgroupBase)) {
        for (const r of o.records) if (r.kind === 'cgroup') report.killed += await d.killCgroup(cgroupDirOf(o.cgroupBase, r));
      }
    }
    rmSync(o.dir, { recursive: true, force: true });
  }
  return report;
}

function signalQuietly(pid: number, sig: NodeJS.Signals): void {
  if (!(pid > 1) || pid === process.pid) return;
  try {
    process.kill(pid, sig);
  } catch {
    // gone
  }
}

/** cgroup.kill (v2, Linux ≥ 5.14) or SIGKILL per member until the group is empty; then rmdir. */
export async function killCgroupDir(dir: string): Promise<number> {
  const members = () => {
    try {
      return readFileSync(`${dir}/cgroup.procs`, 'utf8').split('\n').filter(Boolean).map(Number);
    } catch {
      return undefined; // no such group (removed, or never created)
    }
  };
  const first = members();
  if (!first) return 0;
  let useKill = true;
  for (let i = 0; i < 40; i++) {
    const now = members() ?? [];
    if (now.every((p) => readProc(p)?.zombie ?? true)) break;
    if (useKill) {
      try {
        writeFileSync(`${dir}/cgroup.kill`, '1', { flag: 'r+' });
      } catch {
        useKill = false; // cgroup v1, or a kernel before 5.14
      }
    }
    if (!useKill) for (const p of now) signalQuietly(p, 'SIGKILL');
    await sleep(25);
  }
  // Zombies leave the group when they are reaped (slowly on some boards): retry briefly; if it stays, the
  // next probe's stale-group removal (cgroup.ts) takes it once empty.
  for (let i = 0; i < 10; i++) {
    try {
      rmdirSync(dir);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') break;
      await sleep(25);
    }
  }
  return first.length;
}

const swept = new Map<string, Promise<SweepReport>>();

/** Once per process and records root: the sweep the tool layer runs at STARTING. */
export function sweepOrphansOnce(root: string): Promise<SweepReport> {
  let p = swept.get(root);
  if (!p) swept.set(root, (p = sweepOrphans(root).catch((): SweepReport => ({ runtimes: 0, killed: 0 }))));
  return p;
}
