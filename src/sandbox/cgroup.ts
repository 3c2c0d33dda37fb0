// Control groups for one tool run: `pids.max` bounds a fork bomb (spec §5.8 `max_processes`), and
// membership lists every process of the tool, including one that called setsid() to leave its
// process group, so the kill sweep reaches it.
//
// Why cgroups and not RLIMIT_NPROC: RLIMIT_NPROC counts every process of the uid and the kernel
// ignores it for root (copy_process: `user != INIT_USER && !capable(...)`).
//
// Where we create groups: only below the group we already live in (never elsewhere in the tree),
//   - cgroup v2: `<own>/claw-edge/run-*`, only when our own group already has `pids` in
//     cgroup.subtree_control (we never change our own group's subtree_control), or below an
//     operator-given parent (a delegated directory);
//   - cgroup v1: the `pids` hierarchy, `<own pids group>/claw-edge/run-*`. The v1 memory and cpu
//     hierarchies are not used (memory_mb is RLIMIT_DATA there).
// Everything is probed by doing it (mkdir, write pids.max, rmdir): a readable tree proves nothing.
import { readFileSync, readdirSync } from 'node:fs';
import { mkdir, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface CgroupSupport {
  kind: 'v2' | 'v1';
  /** Directory that holds our per-run groups (created on demand). */
  base: string;
  /** Controllers usable in a run group: always `pids`; v2 may add `memory` and `cpu`. */
  controllers: string[];
  /** v2 ≥ 5.14 has cgroup.kill (kill every member atomically). */
  hasKill: boolean;
}

interface MountLine {
  fstype: string;
  mountPoint: string;
  superOpts: string;
  root: string;
}

function parseMountinfo(text: string): MountLine[] {
  const out: MountLine[] = [];
  for (const line of text.split('\n')) {
    const sep = line.indexOf(' - ');
    if (sep < 0) continue;
    const left = line.slice(0, sep).split(' ');
    const right = line.slice(sep + 3).split(' ');
    out.push({ root: left[3], mountPoint: left[4].replace(/\\040/g, ' '), fstype: right[0], superOpts: right[2] ?? '' });
  }
  return out;
}

/**
 * Reads and listings here are of /proc and the cgroup filesystem: kernel-generated text that never waits on a
 * device, so they are synchronous. fs/promises would take four thread-pool round trips per file (~3 ms of wall
 * time for the start-up probe here, more on a board), on the path to READY. Creating and removing groups stays
 * asynchronous: the kernel may take its time tearing a group down.
 */
function tryRead(p: string): string | undefined {
  try {
    return readFileSync(p, 'utf8');
  } catch {
    return undefined;
  }
}

function tryList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** `own` from /proc/self/cgroup is relative to the mount's root when a cgroup namespace is in use. */
function ownDir(m: MountLine, own: string): string {
  const rel = m.root !== '/' && own.startsWith(m.root) ? own.slice(m.root.length) : own;
  return join(m.mountPoint, rel);
}

async function probeDir(base: string, files: Record<string, string>): Promise<boolean> {
  const probe = join(base, `probe-${process.pid}-${Date.now()}`);
  try {
    await mkdir(probe);
  } catch {
    return false;
  }
  try {
    for (const [f, v] of Object.entries(files)) await writeFile(join(probe, f), v);
    return true;
  } catch {
    return false;
  } finally {
    await rmdir(probe).catch(() => undefined);
  }
}

async function ensureV2Base(base: string, controllers: string[]): Promise<boolean> {
  try {
    await mkdir(base, { recursive: true });
    const have = (tryRead(join(base, 'cgroup.subtree_control')) ?? '').split(/\s+/);
    const want = controllers.filter((c) => !have.includes(c));
    if (want.length > 0) await writeFile(join(base, 'cgroup.subtree_control'), want.map((c) => `+${c}`).join(' '));
    return true;
  } catch {
    return false;
  }
}

/** Run groups left by a runtime that died mid-run: rmdir succeeds only on empty ones. */
async function removeStale(base: string): Promise<void> {
  for (const n of tryList(base)) {
    if (n.startsWith('run-') && !n.startsWith(`run-${process.pid}-`)) await rmdir(join(base, n)).catch(() => undefined);
  }
}

/** Probe what this process may use. `parent` (optional) is an operator-delegated v2 directory. */
export async function probeCgroups(opts: { parent?: string } = {}): Promise<{ support?: CgroupSupport; notes: string[] }> {
  const notes: string[] = [];
  const mountinfo = tryRead('/proc/self/mountinfo');
  const self = tryRead('/proc/self/cgroup');
  if (!mountinfo || !self) return { notes: ['no /proc/self/cgroup: not Linux or /proc not mounted'] };
  const mounts = parseMountinfo(mountinfo);
  const lines = self.split('\n').filter(Boolean).map((l) => {
    const [, , ctl, path] = /^(\d+):([^:]*):(.*)$/.exec(l) ?? [];
    return { ctl: ctl ?? '', path: path ?? '/' };
  });

  const v2 = mounts.find((m) => m.fstype === 'cgroup2');
  const v2own = lines.find((l) => l.ctl === '');
  if (v2 && v2own) {
    const ownPath = opts.parent ?? ownDir(v2, v2own.path);
    const enabled = (tryRead(join(ownPath, 'cgroup.subtree_control')) ?? '').split(/\s+/).filter(Boolean);
    const usable = ['pids', 'memory', 'cpu'].filter((c) => enabled.includes(c));
    if (!usable.includes('pids')) {
      notes.push(`cgroup v2 at ${v2.mountPoint}: ${ownPath} does not delegate the pids controller (subtree_control: ${enabled.join(' ') || 'empty'})`);
    } else {
      const base = join(ownPath, 'claw-edge');
      if ((await ensureV2Base(base, usable)) && (await probeDir(base, { 'pids.max': 'max' }))) {
        // cgroup.kill is write-only: look for it in the listing rather than reading it.
        const hasKill = tryList(base).includes('cgroup.kill');
        await removeStale(base);
        return { support: { kind: 'v2', base, controllers: usable, hasKill }, notes };
      }
      notes.push(`cgroup v2: cannot create groups with pids.max under ${base}`);
    }
  }

  const v1 = mounts.find((m) => m.fstype === 'cgroup' && m.superOpts.split(',').includes('pids'));
  const v1own = lines.find((l) => l.ctl.split(',').includes('pids'));
  if (v1 && v1own) {
    const base = join(ownDir(v1, v1own.path), 'claw-edge');
    let ok = false;
    try {
      await mkdir(base, { recursive: true });
      ok = await probeDir(base, { 'pids.max': 'max' });
    } catch {
      ok = false;
    }
    if (ok) {
      await removeStale(base);
      return { support: { kind: 'v1', base, controllers: ['pids'], hasKill: false }, notes };
    }
    notes.push(`cgroup v1 pids at ${v1.mountPoint}: not writable by this process`);
  } else if (!v2) {
    notes.push('no cgroup filesystem mounted');
  }
  return { notes };
}

export interface RunCgroup {
  dir: string;
  /** File the launcher writes the child's pid into before it execs the tool. */
  procsFile: string;
  pids(): Promise<number[]>;
  /** Signal every member; SIGKILL uses cgroup.kill where the kernel has it. */
  signal(sig: NodeJS.Signals): Promise<void>;
  /** Remove the group once it is empty (retried briefly: members may still be unreaped zombies). */
  remove(): Promise<void>;
}

let seq = 0;

export async function createRunCgroup(
  sup: CgroupSupport,
  limits: { pidsMax?: number; memoryBytes?: number; cpuWeight?: number },
): Promise<RunCgroup> {
  if (sup.kind === 'v2') await ensureV2Base(sup.base, sup.controllers);
  else await mkdir(sup.base, { recursive: true });
  const dir = join(sup.base, `run-${process.pid}-${++seq}-${Date.now().toString(36)}`);
  await mkdir(dir);
  try {
    if (limits.pidsMax !== undefined) await writeFile(join(dir, 'pids.max'), String(limits.pidsMax));
    if (limits.memoryBytes !== undefined && sup.controllers.includes('memory')) {
      await writeFile(join(dir, 'memory.max'), String(limits.memoryBytes));
      await writeFile(join(dir, 'memory.swap.max'), '0').catch(() => undefined);
    }
    if (limits.cpuWeight !== undefined && sup.controllers.includes('cpu')) await writeFile(join(dir, 'cpu.weight'), String(limits.cpuWeight));
  } catch (e) {
    await rmdir(dir).catch(() => undefined);
    throw e;
  }
  const pids = async (): Promise<number[]> => {
    const t = tryRead(join(dir, 'cgroup.procs'));
    return (t ?? '').split('\n').filter(Boolean).map(Number);
  };
  const run: RunCgroup = {
    dir,
    procsFile: join(dir, 'cgroup.procs'),
    pids,
    async signal(sig) {
      if (sig === 'SIGKILL' && sup.hasKill) {
        await writeFile(join(dir, 'cgroup.kill'), '1').catch(() => undefined);
        return;
      }
      for (const pid of await pids()) {
        try {
          process.kill(pid, sig);
        } catch {
          // already gone
        }
      }
    },
    async remove() {
      for (let i = 0; i < 50; i++) {
        try {
          await rmdir(dir);
          return;
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
          if (i % 5 === 4) await run.signal('SIGKILL');
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    },
  };
  return run;
}
