// Stopping a tool so that none of its processes survive (spec §5.4: "the runtime MUST terminate the
// execution"; runtime profile §10: SIGTERM, then SIGKILL after a grace period).
//
// The tool is spawned detached, so it leads its own process group and `kill(-pgid)` reaches every
// descendant that did not leave the group. What catches the ones that did (setsid, setpgid):
//   - under bubblewrap: the pid namespace. When bubblewrap's pid 1 dies, the kernel kills every
//     process in the namespace, and `--die-with-parent` ties pid 1 to the outer bubblewrap;
//   - with a run cgroup: its member list, which setsid() does not change;
//   - with neither: nothing. Such a process survives (documented weakness, asserted by a test).
//
// Under bubblewrap SIGTERM must not reach the two bubblewrap processes: the outer one dies of it
// and takes the namespace down at once with SIGKILL, which would cancel the tool's grace period.
import type { RunCgroup } from './cgroup.ts';
import { readProc, readProcTable, type ProcInfo } from './proc-table.ts';

export interface KillTarget {
  /** pid of what we spawned (the process-group id). */
  pid: number;
  bwrap: boolean;
  cgroup?: RunCgroup;
  /** Set by the runner when the spawned process has exited and been reaped. */
  exited: boolean;
}

/** Live (non-zombie) processes whose process group is `pgid`. Linux /proc scan, a few ms. */
export function groupMembers(pgid: number): ProcInfo[] {
  return readProcTable().filter((s) => s.pgid === pgid && !s.zombie);
}

function send(pid: number, sig: NodeJS.Signals): void {
  // kill(0) / kill(-0) would signal our own process group: never, whatever went wrong before.
  if (!Number.isInteger(pid) || pid === 0 || Math.abs(pid) === process.pid) return;
  try {
    process.kill(pid, sig);
  } catch {
    // gone already (ESRCH)
  }
}

function groupExists(pgid: number): boolean {
  if (!(pgid > 0)) return false;
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function liveCgroupPids(cg: RunCgroup): Promise<number[]> {
  return (await cg.pids()).filter((p) => {
    const s = readProc(p);
    return !!s && !s.zombie;
  });
}

export async function signalTool(t: KillTarget, sig: 'SIGTERM' | 'SIGKILL'): Promise<void> {
  if (sig === 'SIGKILL' || !t.bwrap) {
    send(-t.pid, sig);
    await t.cgroup?.signal(sig);
    return;
  }
  const members = groupMembers(t.pid);
  const bwrapInit = new Set(members.filter((m) => m.ppid === t.pid).map((m) => m.pid));
  const skip = new Set([t.pid, ...bwrapInit]);
  const targets = new Set(members.map((m) => m.pid));
  if (t.cgroup) for (const p of await liveCgroupPids(t.cgroup)) targets.add(p);
  for (const p of targets) if (!skip.has(p)) send(p, sig);
}

/** True when nothing of the tool is left running (zombies awaiting their reaper do not count). */
export async function isGone(t: KillTarget): Promise<boolean> {
  if (!(t.pid > 0)) return true; // never started
  if (!t.exited) return false;
  if (groupMembers(t.pid).length > 0) return false;
  return !t.cgroup || (await liveCgroupPids(t.cgroup)).length === 0;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * SIGTERM, wait up to `graceMs` for everything to go, then SIGKILL until nothing is left. The grace is
 * measured on the monotonic clock: a wall clock set back (a board's NTP sync, `date -s`) would hold off
 * the SIGKILL for as long as it went back, one set forward would skip the grace (docs/boards.md "Clock").
 */
export async function terminate(t: KillTarget, graceMs: number): Promise<void> {
  await signalTool(t, 'SIGTERM');
  const deadline = performance.now() + graceMs;
  while (performance.now() < deadline) {
    if (await isGone(t)) return;
    await sleep(Math.min(25, Math.max(1, deadline - performance.now())));
  }
  await sweep(t);
}

/**
 * SIGKILL whatever is left (after a normal exit: background processes the tool left behind).
 * `cleanExit`: the tool exited by itself and we sent no signal. Under bubblewrap without a cgroup
 * there is then nothing to scan for: bwrap runs `--unshare-pid --die-with-parent`, its init is pid 1
 * of the namespace, and the kernel kills and reaps every process of a pid namespace before its init
 * finishes exiting — which the outer bwrap waits for before it exits. (After a kill we still scan:
 * the inner init dies asynchronously through PDEATHSIG then.) Saves a /proc scan per call.
 * Resolves true when it found something to kill (the runner then does not reuse the run directory).
 */
export async function sweep(t: KillTarget, opts: { cleanExit?: boolean } = {}): Promise<boolean> {
  if (opts.cleanExit && t.bwrap && !t.cgroup && t.exited) return false;
  for (let i = 0; i < 80; i++) {
    // Fast path, the usual case: the group is empty (ESRCH) or holds only zombies waiting for
    // their reaper, and the cgroup (if any) has no live member.
    if ((!groupExists(t.pid) || (await isGone(t))) && (!t.cgroup || (await liveCgroupPids(t.cgroup)).length === 0)) return i > 0;
    await signalTool(t, 'SIGKILL');
    await sleep(i === 0 ? 1 : 25);
  }
  return true;
}
