// bubblewrap command line for one tool run (spec §5.8 capabilities.network / .filesystem).
// Flags checked against bubblewrap 0.8 `--help`. Later mounts cover earlier ones, so the order is:
// namespaces → root view → mount_paths, tool binary → the sandbox's own /dev and /proc → other calls'
// private dirs hidden → runtime's own files hidden → this call's private dir and secrets → denied_paths
// masks → sockets → the runtime's masks made read-only. /dev and /proc come after every bind: a
// mount_path `/` (a write-workspace skill's "read-only everywhere") shows the host's /proc and /dev
// otherwise: every host process and its command line, and a nodev /dev where even /dev/null fails.
//
//   filesystem deny      : empty root; /usr, /bin, /sbin, /lib* read-only (what binaries need);
//                          an empty tmpfs work dir. No /etc.
//   filesystem read-only : `--ro-bind / /` (recursive, every submount read-only) + tmpfs work dir
//   filesystem scoped    : /usr, /bin, /sbin, /lib* read-only, the few /etc files a dynamically linked
//                          program needs (ETC_BASE; ETC_NETWORK only when the network is not denied), each
//                          mount_path with its ro/rw permission, tmpfs work dir. Never all of /etc: it is
//                          where secrets directories and runtime configurations usually live.
//   filesystem full      : `--bind / /`
//   runtime's own files  : the secrets directory, data_dir (but its workspace/) and claw.runtime.yaml
//                          (HostCapabilities.private) are covered by an empty read-only tmpfs, a file by
//                          /dev/null, wherever a bind would show them, whatever the mode; a bind *inside*
//                          one of them is refused (docs/security.md)
//   other calls          : every claw runtime's private-dir parent (run-dirs.ts) a bind would show is
//                          covered by an empty tmpfs, read-only but for ours, into which this call's own
//                          run dir and secrets dir are mounted again: the tool runs under our uid, so
//                          modes alone would let it read a concurrent call's HOME or file-mount secret
//   denied_paths         : a directory is covered by a read-only empty tmpfs, a file by /dev/null
//   network deny         : `--unshare-net` (a fresh namespace with only loopback), and every unix socket
//                          bound to a path that a bind would show covered by /dev/null (unix-sockets.ts)
//   /proc, /dev          : always the sandbox's own (a fresh /proc of its pid namespace, bubblewrap's
//                          minimal /dev); a mount_path inside either is refused (`sandbox-mount-path`).
//                          /proc/sys and the other kernel knobs of PROC_READ_ONLY are bound read-only:
//                          bubblewrap leaves /proc/sys writable, and uid 0 writes sysctls with no capability
//                          at all (measured: kernel.core_pattern set from a tool with CapEff 0 — a `|helper`
//                          there runs as host root at the next crash)
//   binds by fd          : where bubblewrap has --bind-fd (host.ts probes it), mount_paths and the tool's own
//                          files are opened here (O_PATH) and judged by what was opened; bubblewrap binds that
//                          object or dies ("Race condition binding dirfd"), so a path swapped for a symlink
//                          between the check and the mount (by a tool writing a parent of the mount_path)
//                          cannot lead the bind elsewhere. Without it, binds go by real path, as before.
// Always: `--unshare-pid --die-with-parent` (a setsid() escape dies with the namespace; the sandbox
// dies with us), ipc/uts/cgroup namespaces, a fresh /proc and a minimal /dev. As root, bubblewrap
// keeps every capability unless told otherwise (measured: CapEff full), so we drop them all.
import { close, open } from 'node:fs';
import { lstat, mkdir, readlink, realpath, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import type { SandboxSpec } from '../manifest/schema/index.ts';
import { ClawError } from '../protocol/errors.ts';
import type { PrivatePaths } from './host.ts';
import { movableAncestor, movableMessage, ownMountMessage, type IsolationPlan } from './levels.ts';
import { inOwnMount, within } from './paths.ts';
import { PRIVATE_DIR_NAME } from './run-dirs.ts';
import { deniedPaths, fsMode, mountPaths } from './spec-view.ts';
import { boundSocketPaths } from './unix-sockets.ts';

const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/**
 * What a dynamically linked program reads from /etc whatever it does: the loader's cache and config, name
 * service switch and the user/group databases (names only: shadow files never), time zone, the Debian
 * alternatives links (`awk`, `python` and friends are symlinks through /etc/alternatives), the OS release,
 * and /etc/hosts so `localhost` resolves in the loopback-only namespace of `network: deny`.
 */
export const ETC_BASE = ['ld.so.cache', 'ld.so.conf', 'ld.so.conf.d', 'nsswitch.conf', 'passwd', 'group', 'localtime', 'timezone', 'alternatives', 'os-release', 'hosts'];
/** Only when the network is not denied: DNS, services, and the CA certificates (never /etc/ssl/private). */
export const ETC_NETWORK = ['resolv.conf', 'host.conf', 'gai.conf', 'services', 'protocols', 'ssl/certs', 'ssl/openssl.cnf', 'ca-certificates', 'ca-certificates.conf', 'pki/tls/certs', 'pki/ca-trust'];

/**
 * Bound read-only over the fresh /proc (each if present): the kernel's writable knobs. uid 0 passes their
 * permission check with no capability (sysctls: kernel.core_pattern, kernel.modprobe run helpers as host root),
 * so `--cap-drop ALL` does not hold them. Docker's read-only /proc paths; bubblewrap itself covers only irq and
 * bus here (its /proc/sys cover is skipped when access(2) says no, as it does for root).
 */
export const PROC_READ_ONLY = ['sys', 'sysrq-trigger', 'fs', 'irq', 'bus', 'acpi', 'scsi'];

/** One host path shown in the sandbox: `src` (real) at `dest`. */
interface Bind {
  src: string;
  dest: string;
  rw: boolean;
}

export interface BwrapInput {
  spec: SandboxSpec;
  plan: IsolationPlan;
  root: boolean;
  /** Private per-run directory (host path); under bwrap it becomes an empty tmpfs unless `full`. */
  workdir: string;
  cwd: string;
  secretDir?: string;
  /**
   * The tmp root (real path) and its private-dir parents: every claw runtime's, this process's own (where
   * workdir and secretDir live). Listed only when a bind shows the root (a readdir of a big /tmp is
   * milliseconds); each is covered wherever a bind shows it.
   */
  privateDirs?: { root: string; list(): Promise<{ own?: string; all: string[] }> };
  /** Files that must be visible read-only (the tool binary, prlimit, caller's readOnlyBinds): [src, dest]. */
  readOnly: [string, string][];
  /** Mask /sys/fs/cgroup so a tool cannot move itself out of its run cgroup. */
  maskCgroupFs: boolean;
  /** The host's path-bound unix sockets (default: unix-sockets.ts), covered under network deny. */
  sockets?: () => Promise<string[]>;
  /**
   * Given (bubblewrap has --bind-fd): mount_paths and `readOnly` sources are opened (O_PATH) and bound by
   * descriptor. Each opened fd is pushed here; the child must get fds[k] as its fd 3 + k (launch.ts), and
   * the caller closes them after the spawn (also when this throws).
   */
  fds?: number[];
}

const openFd = promisify(open);
const closeFd = promisify(close);
// Linux's O_PATH (not in fs.constants): a handle naming the object without opening it (no device is opened,
// no fifo blocks). Node adds O_CLOEXEC.
const O_PATH = 0o10000000;

/**
 * Where the bind source `path` really is, and the bwrap arguments that bind exactly that object: by fd when
 * `fds` is given (the object opened here is the one judged and the one bound), else by real path. undefined:
 * nothing there.
 */
async function source(path: string, fds: number[] | undefined): Promise<{ real: string; src: string[] } | undefined> {
  if (!fds) {
    const real = await realpath(path).catch(() => undefined);
    return real === undefined ? undefined : { real, src: [real] };
  }
  let fd: number;
  try {
    fd = await openFd(path, O_PATH);
  } catch {
    return undefined;
  }
  const real = await readlink(`/proc/self/fd/${fd}`).catch(() => undefined);
  if (real === undefined || !real.startsWith('/') || real.endsWith(' (deleted)')) {
    await closeFd(fd).catch(() => undefined);
    return undefined;
  }
  fds.push(fd);
  return { real, src: [String(3 + fds.length - 1)] };
}

async function kind(p: string): Promise<'dir' | 'file' | 'link' | undefined> {
  try {
    const s = await lstat(p);
    return s.isSymbolicLink() ? 'link' : s.isDirectory() ? 'dir' : 'file';
  } catch {
    return undefined;
  }
}

async function systemView(binds: Bind[]): Promise<string[]> {
  const out: string[] = [];
  for (const d of SYSTEM_DIRS) {
    const k = await kind(d);
    // Merged-/usr systems: /bin → usr/bin. Recreate the link instead of binding its target twice.
    if (k === 'link') out.push('--symlink', await readlink(d), d);
    else if (k === 'dir') {
      out.push('--ro-bind', d, d);
      binds.push({ src: await realpath(d), dest: d, rw: false });
    }
  }
  return out;
}

/** The /etc entries of ETC_BASE (+ ETC_NETWORK) that exist here, each bound by its real path (resolv.conf is often a link into /run). */
async function etcView(network: boolean, binds: Bind[]): Promise<string[]> {
  const out: string[] = [];
  for (const name of network ? [...ETC_BASE, ...ETC_NETWORK] : ETC_BASE) {
    const dest = `/etc/${name}`;
    const src = await realpath(dest).catch(() => undefined);
    if (!src) continue;
    out.push('--ro-bind', src, dest);
    binds.push({ src, dest, rw: false });
  }
  return out;
}

/** Where host path `p` appears through bind `b` (p inside b.src). */
const through = (b: Bind, p: string) => (b.src === '/' ? p : `${b.dest}${p.slice(b.src.length)}`);

/**
 * Hides the runtime's own files from every bind that would show them; a bind that lies inside one is refused
 * (a tool that asked for a path inside the secrets directory gets an error, not an empty directory). Each
 * mask's `--remount-ro` is left to the caller (`remountRo`).
 */
async function hidePrivate(priv: PrivatePaths, binds: Bind[], remountRo: string[], mode: string): Promise<string[]> {
  const out: string[] = [];
  const real = async (p: string) => realpath(resolve(p)).catch(() => undefined);
  const shared = (await Promise.all(priv.shared.map(real))).filter((x): x is string => !!x);
  const masked = new Set<string>();
  // Later binds cover earlier ones: where two show the same place (`/srv` rw, then `/srv/claw` ro), the last
  // one is what the tool sees, so it decides how the workspace is shown again through the mask.
  const lastFirst = [...binds].reverse();
  for (const dir of priv.dirs) {
    // A bind shows the host's tree live: a data_dir the runtime creates later (its first ledger, audit or
    // memory write) would appear unmasked to a long-running tool (a stdio MCP server started at STARTING).
    // So a missing one is made now, empty and 0700, and masked like any other.
    const p = (await real(dir)) ?? (await mkdir(resolve(dir), { recursive: true, mode: 0o700 }).then(() => real(dir), () => undefined));
    if (!p) continue; // cannot be made (read-only filesystem): nothing there to show
    for (const b of lastFirst) {
      if (within(b.src, p) && !shared.some((s) => within(s, p) && within(b.src, s))) {
        throw new ClawError('sandbox-private-path', `the sandbox binds ${b.dest}, which is inside ${dir}, a directory of the runtime itself (secrets, data_dir): no tool may see it (docs/security.md)`);
      }
      if (!within(p, b.src)) continue;
      const at = through(b, p);
      if (masked.has(at)) continue;
      masked.add(at);
      out.push('--tmpfs', at);
      // data_dir/workspace is the agent's workspace, shared with tools on purpose: shown again through the mask,
      // writable as the last bind showing it says (a write-workspace skill: `/` ro, the workspace itself rw).
      for (const s of shared) {
        if (!within(s, p) || s === p) continue;
        const rw = lastFirst.find((x) => within(s, x.src))?.rw ?? b.rw;
        out.push(rw ? '--bind' : '--ro-bind', s, `${at}${s.slice(p.length)}`);
      }
      // Made read-only last (bwrapArgs): this call's run dir, its secrets and denied_paths may lie inside (a
      // TMPDIR inside data_dir), and their mount points are made in the mask while it is still writable.
      remountRo.push(at);
    }
  }
  for (const file of priv.files) {
    const f = await real(file);
    if (!f) continue;
    for (const b of binds) {
      if (b.src === f) throw new ClawError('sandbox-private-path', `the sandbox binds ${b.dest}, the runtime's configuration ${file}: no tool may see it (docs/security.md)`);
      if (!within(f, b.src)) continue;
      const at = through(b, f);
      if (!masked.has(at)) out.push('--ro-bind', '/dev/null', at);
      masked.add(at);
    }
  }
  // Under `full` every parent is writable by design (docs/security.md); elsewhere a mask a tool can move aside is refused.
  if (mode !== 'full') {
    const points = new Set([...binds.map((b) => b.dest), ...masked]);
    for (const at of masked) {
      const a = movableAncestor(at, binds, points);
      if (a) throw new ClawError('sandbox-private-path', movableMessage(at, a));
    }
  }
  return out;
}

/** Covers each private-dir parent wherever a bind shows it; only this process's own stays writable, for the mounts made into it next. */
function hideOtherRuns(dirs: { own?: string; all: string[] }, binds: Bind[]): string[] {
  const out: string[] = [];
  const masked = new Set<string>();
  for (const dir of dirs.all) {
    for (const b of binds) {
      if (!within(dir, b.src)) continue;
      const at = through(b, dir);
      if (masked.has(at)) continue;
      masked.add(at);
      out.push('--tmpfs', at);
      if (dir !== dirs.own) out.push('--remount-ro', at);
    }
  }
  return out;
}

/**
 * A path-bound unix socket crosses the network namespace (unix-sockets.ts): each one a bind shows is
 * covered by /dev/null where the tool would see it. Sockets under a place that is covered anyway (the
 * work dir's tmpfs, the runtime's own dirs, denied_paths, the fresh /dev and /proc) are left alone: the
 * mount point would not exist there.
 */
async function hideSockets(sockets: string[], binds: Bind[], covered: string[]): Promise<string[]> {
  const real = async (p: string) => realpath(resolve(p)).catch(() => resolve(p));
  const skip = ['/dev', '/proc', ...(await Promise.all(covered.map(real)))];
  const out: string[] = [];
  const masked = new Set<string>();
  for (const sock of sockets) {
    for (const b of binds) {
      if (!within(sock, b.src)) continue;
      const at = through(b, sock);
      if (masked.has(at) || skip.some((d) => within(at, d))) continue;
      masked.add(at);
      out.push('--ro-bind', '/dev/null', at);
    }
  }
  return out;
}

export async function bwrapArgs(i: BwrapInput): Promise<string[]> {
  const a = ['--die-with-parent', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try'];
  if (i.plan.network === 'deny') a.push('--unshare-net');
  if (i.plan.pids?.by === 'userns-nproc') a.push('--unshare-user');
  if (i.root) a.push('--cap-drop', 'ALL');
  const fm = fsMode(i.spec);
  const binds: Bind[] = [];
  if (fm === 'full' || fm === 'read-only') {
    a.push(fm === 'full' ? '--bind' : '--ro-bind', '/', '/');
    binds.push({ src: '/', dest: '/', rw: fm === 'full' });
  } else {
    a.push(...(await systemView(binds)));
    if (fm === 'scoped') a.push(...(await etcView(i.plan.network !== 'deny', binds)));
  }
  if (fm === 'scoped') {
    for (const m of mountPaths(i.spec)) {
      const dest = resolve(m.path);
      const own = inOwnMount(dest);
      if (own) throw ownMountError(m.path, own);
      const s = await source(dest, i.fds);
      if (!s) continue; // a missing ro mount shows nothing; rw mounts were created by the launcher
      const real = inOwnMount(s.real);
      if (real) throw ownMountError(`${m.path} (${s.real})`, real);
      a.push(`${m.permissions === 'rw' ? '--bind' : '--ro-bind'}${i.fds ? '-fd' : ''}`, ...s.src, dest);
      binds.push({ src: s.real, dest, rw: m.permissions === 'rw' });
    }
  }
  if (fm === 'deny' || fm === 'scoped') {
    for (const [path, dest] of i.readOnly) {
      const s = await source(path, i.fds);
      if (!s) continue; // as --ro-bind-try: a file that is not there is not shown
      a.push(i.fds ? '--ro-bind-fd' : '--ro-bind-try', ...s.src, dest);
      binds.push({ src: s.real, dest, rw: false });
    }
  }
  // The sandbox's own /dev and /proc, over anything a bind above showed there.
  a.push('--dev', '/dev', '--proc', '/proc');
  for (const p of PROC_READ_ONLY) a.push('--ro-bind-try', `/proc/${p}`, `/proc/${p}`);
  const pd = i.privateDirs;
  if (pd) {
    // A bind inside a claw runtime's private-dir parent (a mount_path through a planted symlink) would show a
    // concurrent call's HOME or file-mount secret: refused like a bind inside data_dir.
    for (const b of binds) {
      if (b.src === pd.root || !within(b.src, pd.root)) continue;
      const top = b.src.slice(pd.root.length + 1).split('/')[0];
      if (PRIVATE_DIR_NAME.test(top)) throw new ClawError('sandbox-private-path', `the sandbox binds ${b.dest}, inside ${resolve(pd.root, top)}, a claw tool call's private directory`);
    }
  }
  const runs = pd && binds.some((b) => within(pd.root, b.src)) ? await pd.list() : { all: [] };
  const others = hideOtherRuns(runs, binds);
  a.push(...others);
  const remountRo: string[] = [];
  if (i.plan.hide) a.push(...(await hidePrivate(i.plan.hide, binds, remountRo, fm)));
  // The work dir is an empty tmpfs; under `full` the tool works in the host directory itself, shown again
  // when a cover above hid it. After the runtime's masks: a TMPDIR inside data_dir is shown again through them.
  if (fm !== 'full') a.push('--tmpfs', i.workdir);
  else if (others.length > 0 || remountRo.some((d) => within(i.workdir, d))) a.push('--bind', i.workdir, i.workdir);
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
  if (i.plan.network === 'deny') a.push(...(await hideSockets(await (i.sockets ?? boundSocketPaths)(), binds, [i.workdir, ...runs.all, ...(i.plan.hide?.dirs ?? []), ...deniedPaths(i.spec)])));
  // Wherever a bind shows the cgroup tree (`/` of read-only/full, or a mount_path of `/` or /sys), so a tool
  // cannot write itself into another group's cgroup.procs and leave its run cgroup.
  if (i.maskCgroupFs && (await kind('/sys/fs/cgroup')) === 'dir') {
    const cg = await realpath('/sys/fs/cgroup').catch(() => '/sys/fs/cgroup');
    for (const b of binds) {
      if (within(b.src, cg)) throw new ClawError('sandbox-mount-path', `the sandbox binds ${b.dest}, inside the cgroup tree ${cg}`);
      if (within(cg, b.src)) a.push('--tmpfs', through(b, cg));
    }
  }
  for (const at of remountRo) a.push('--remount-ro', at);
  a.push('--chdir', i.cwd);
  return a;
}

const ownMountError = (what: string, own: string) => new ClawError('sandbox-mount-path', ownMountMessage(what, own));
