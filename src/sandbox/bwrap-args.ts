// bubblewrap command line for one tool run (spec §5.8 capabilities.network / .filesystem).
// Flags checked against bubblewrap 0.8 `--help`. Later mounts cover earlier ones, so the order is:
// namespaces → root view → /dev, /proc → private dirs → mount_paths → secrets → denied_paths masks.
//
//   filesystem deny      : empty root; /usr, /bin, /sbin, /lib* read-only (what binaries need);
//                          an empty tmpfs work dir. No /etc.
//   filesystem read-only : `--ro-bind / /` (recursive, every submount read-only) + tmpfs work dir
//   filesystem scoped    : /usr, /bin, /sbin, /lib*, /etc read-only + each mount_path with its
//                          ro/rw permission + tmpfs work dir
//   filesystem full      : `--bind / /`
//   denied_paths         : a directory is covered by a read-only empty tmpfs, a file by /dev/null
//   network deny         : `--unshare-net` (a fresh namespace with only loopback)
// Always: `--unshare-pid --die-with-parent` (a setsid() escape dies with the namespace; the sandbox
// dies with us), ipc/uts/cgroup namespaces, a fresh /proc and a minimal /dev. As root, bubblewrap
// keeps every capability unless told otherwise (measured: CapEff full), so we drop them all.
import { lstat, readlink, realpath, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { SandboxSpec } from '../manifest/schema/index.ts';
import type { IsolationPlan } from './levels.ts';
import { deniedPaths, fsMode, mountPaths } from './spec-view.ts';

const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

export interface BwrapInput {
  spec: SandboxSpec;
  plan: IsolationPlan;
  root: boolean;
  /** Private per-run directory (host path); under bwrap it becomes an empty tmpfs unless `full`. */
  workdir: string;
  cwd: string;
  secretDir?: string;
  /** Files that must be visible read-only (the tool binary, prlimit, caller's readOnlyBinds): [src, dest]. */
  readOnly: [string, string][];
  /** Mask /sys/fs/cgroup so a tool cannot move itself out of its run cgroup. */
  maskCgroupFs: boolean;
}

async function kind(p: string): Promise<'dir' | 'file' | 'link' | undefined> {
  try {
    const s = await lstat(p);
    return s.isSymbolicLink() ? 'link' : s.isDirectory() ? 'dir' : 'file';
  } catch {
    return undefined;
  }
}

async function systemView(extra: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const d of [...SYSTEM_DIRS, ...extra]) {
    const k = await kind(d);
    // Merged-/usr systems: /bin → usr/bin. Recreate the link instead of binding its target twice.
    if (k === 'link') out.push('--symlink', await readlink(d), d);
    else if (k === 'dir') out.push('--ro-bind', d, d);
  }
  return out;
}

export async function bwrapArgs(i: BwrapInput): Promise<string[]> {
  const a = ['--die-with-parent', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try'];
  if (i.plan.network === 'deny') a.push('--unshare-net');
  if (i.plan.pids?.by === 'userns-nproc') a.push('--unshare-user');
  if (i.root) a.push('--cap-drop', 'ALL');
  const fm = fsMode(i.spec);
  if (fm === 'full') a.push('--bind', '/', '/');
  else if (fm === 'read-only') a.push('--ro-bind', '/', '/');
  else a.push(...(await systemView(fm === 'scoped' ? ['/etc'] : [])));
  a.push('--dev', '/dev', '--proc', '/proc');
  if (fm !== 'full') a.push('--tmpfs', i.workdir);
  if (fm === 'scoped') {
    for (const m of mountPaths(i.spec)) {
      const dest = resolve(m.path);
      let src: string;
      try {
        src = await realpath(dest);
      } catch {
        continue; // a missing ro mount shows nothing; rw mounts were created by the launcher
      }
      a.push(m.permissions === 'rw' ? '--bind' : '--ro-bind', src, dest);
    }
  }
  if (fm === 'deny' || fm === 'scoped') for (const [src, dest] of i.readOnly) a.push('--ro-bind-try', src, dest);
  if (i.secretDir) a.push('--ro-bind', i.secretDir, i.secretDir);
  for (const d of deniedPaths(i.spec)) {
    let real: string;
    try {
      real = await realpath(resolve(d));
    } catch {
      continue; // nothing to hide (a path created later is not masked: see runner notes)
    }
    if ((await stat(real)).isDirectory()) a.push('--tmpfs', real, '--remount-ro', real);
    else a.push('--ro-bind', '/dev/null', real);
  }
  if (i.maskCgroupFs && (fm === 'full' || fm === 'read-only') && (await kind('/sys/fs/cgroup')) === 'dir') a.push('--tmpfs', '/sys/fs/cgroup');
  a.push('--chdir', i.cwd);
  return a;
}
