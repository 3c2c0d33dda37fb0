// bubblewrap command line for one tool run (spec §5.8 capabilities.network / .filesystem).
// Flags checked against bubblewrap 0.8 `--help`. Later mounts cover earlier ones, so the order is:
// namespaces → root view → /dev, /proc → mount_paths → other calls' private dirs hidden → this call's
// private dir and secrets → runtime's own files hidden → denied_paths masks.
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
// Always: `--unshare-pid --die-with-parent` (a setsid() escape dies with the namespace; the sandbox
// dies with us), ipc/uts/cgroup namespaces, a fresh /proc and a minimal /dev. As root, bubblewrap
// keeps every capability unless told otherwise (measured: CapEff full), so we drop them all.
import { lstat, mkdir, readlink, realpath, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { SandboxSpec } from '../manifest/schema/index.ts';
import { ClawError } from '../protocol/errors.ts';
import type { PrivatePaths } from './host.ts';
import type { IsolationPlan } from './levels.ts';
import { within } from './paths.ts';
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
 * (a tool that asked for a path inside the secrets directory gets an error, not an empty directory).
 */
async function hidePrivate(priv: PrivatePaths, binds: Bind[]): Promise<string[]> {
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
      // data_dir/workspace is the agent's workspace, shared with tools on purpose: shown again through the mask.
      for (const s of shared) if (within(s, p) && s !== p) out.push(b.rw ? '--bind' : '--ro-bind', s, `${at}${s.slice(p.length)}`);
      out.push('--remount-ro', at);
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
  a.push('--dev', '/dev', '--proc', '/proc');
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
      binds.push({ src, dest, rw: m.permissions === 'rw' });
    }
  }
  if (fm === 'deny' || fm === 'scoped') {
    for (const [src, dest] of i.readOnly) {
      a.push('--ro-bind-try', src, dest);
      binds.push({ src, dest, rw: false });
    }
  }
  const pd = i.privateDirs;
  const runs = pd && binds.some((b) => within(pd.root, b.src)) ? await pd.list() : { all: [] };
  const others = hideOtherRuns(runs, binds);
  a.push(...others);
  // The work dir is an empty tmpfs; under `full` the tool works in the host directory itself, shown again
  // when the cover above hid it.
  if (fm !== 'full') a.push('--tmpfs', i.workdir);
  else if (others.length > 0) a.push('--bind', i.workdir, i.workdir);
  if (i.secretDir) a.push('--ro-bind', i.secretDir, i.secretDir);
  if (i.plan.hide) a.push(...(await hidePrivate(i.plan.hide, binds)));
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
  if (i.maskCgroupFs && (fm === 'full' || fm === 'read-only') && (await kind('/sys/fs/cgroup')) === 'dir') a.push('--tmpfs', '/sys/fs/cgroup');
  a.push('--chdir', i.cwd);
  return a;
}
