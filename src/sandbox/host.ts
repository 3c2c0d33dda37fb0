// Which isolation layers this machine offers (spec §5.8 isolation levels; §10.1 layer 3). Every
// layer is probed by using it once, because an installed binary proves nothing: bubblewrap is
// often present but refused user namespaces (AppArmor, sysctl), cgroup trees are often read-only.
// The answer is cached per process, and the spawned probes across processes (probe-cache.ts: keyed by the
// binaries and the kernel); `probeHost` without `cacheDir` gives an uncached answer (doctor, tests).
import { childProcess } from '../node/lazy.ts';
import { cacheDir } from '../node/code-cache.ts';
import { HARMLESS_ENV } from '../node/scrub-env.ts';
import { cachedProbe, probeFingerprint } from './probe-cache.ts';
import { accessSync, constants, readFileSync } from 'node:fs';
import { arch, availableParallelism, cpus, release } from 'node:os';
import { delimiter, join } from 'node:path';
import { probeCgroups, type CgroupSupport } from './cgroup.ts';

export interface Tool {
  path?: string;
  works: boolean;
  version?: string;
  error?: string;
}

/**
 * This runtime's own files on this host, which no tool may see whatever its sandbox binds
 * (docs/security.md): given by the runtime (tool-deps.ts), not probed.
 */
export interface PrivatePaths {
  /** The secrets directory and data_dir: hidden wherever a bind would show them; a bind inside one is refused. */
  dirs: string[];
  /** The runtime configuration file. */
  files: string[];
  /** Directories inside `dirs` shared with tools on purpose (data_dir/workspace). */
  shared: string[];
}

export interface HostCapabilities {
  platform: string;
  kernel: string;
  arch: string;
  cpus: number;
  uid: number;
  root: boolean;
  /** POSIX shell used to enter a cgroup before exec (the only place we need one). */
  sh?: string;
  /**
   * `bwrap --unshare-all --die-with-parent --ro-bind / / --dev /dev --proc /proc true` ran; `userns`: `--unshare-user` too;
   * `bindFd`: its `--help` lists `--ro-bind-fd` (upstream 0.10, backported by distributions), so binds go by descriptor (bwrap-args.ts).
   */
  bwrap: Tool & { userns: boolean; bindFd?: boolean };
  prlimit: Tool;
  /** Reported only: the runner uses bubblewrap for namespaces. */
  unshare: Tool;
  cgroup: { support?: CgroupSupport; notes: string[] };
  /**
   * Names of the variables this process's /proc/<pid>/environ still shows besides harmless ones (PATH, HOME,
   * LANG…): empty once src/node/scrub-env.ts has wiped the initial environment block.
   */
  environ?: { exposed: string[]; readable: boolean };
  private?: PrivatePaths;
}

/**
 * What a process of our uid outside a pid namespace would read in /proc/<our pid>/environ: variable names only.
 * Synchronous like the cgroup probe's reads (cgroup.ts): a /proc file, kernel text that never waits on a device.
 */
function probeEnviron(): HostCapabilities['environ'] {
  try {
    const text = readFileSync('/proc/self/environ', 'latin1');
    const names = text.split('\0').map((e) => e.slice(0, Math.max(0, e.indexOf('=')))).filter((n) => n && !HARMLESS_ENV.test(n));
    return { exposed: [...new Set(names)], readable: true };
  } catch {
    return { exposed: [], readable: false };
  }
}

/** Searched after PATH by whichSync, so the shell builtin's check (shell-interpreter.ts) looks there too. */
export const STD_DIRS: readonly string[] = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

/**
 * `which(1)`, with access(2) called directly: a PATH walk is a few syscalls, cheaper than thread-pool round trips.
 * `pathVar` is the caller's PATH (the host's environment); the standard directories are searched after it.
 */
export function whichSync(name: string, pathVar = ''): string | undefined {
  // Only absolute PATH entries: a relative one would be found from the runtime's cwd here but run from the
  // tool's working directory by the child.
  for (const dir of [...pathVar.split(delimiter).filter((d) => d.startsWith('/')), ...STD_DIRS]) {
    const p = join(dir, name);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // next
    }
  }
  return undefined;
}

async function run(bin: string, args: string[], timeoutMs = 3000): Promise<{ ok: boolean; out: string; err: string; timedOut: boolean }> {
  const { execFile } = await childProcess();
  return new Promise((resolve) => {
    execFile(bin, args, { timeout: timeoutMs, env: { PATH: STD_DIRS.join(':') } }, (e, out, err) =>
      resolve({ ok: !e, out: String(out), err: String(err || (e ? e.message : '')), timedOut: e?.killed === true }),
    );
  });
}

/** One tool probed by running it; `timedOut`: the answer says nothing lasting (a loaded machine), never cached. */
async function probeTool(name: string, path: string | undefined, args: string[], versionArgs?: string[]): Promise<{ tool: Tool; timedOut: boolean }> {
  if (!path) return { tool: { works: false, error: `${name} not found` }, timedOut: false };
  const r = await run(path, args);
  const t: Tool = { path, works: r.ok };
  if (!r.ok) t.error = r.err.trim().split('\n').slice(-1)[0] || 'failed';
  if (versionArgs) {
    const v = await run(path, versionArgs);
    if (v.ok) t.version = v.out.trim().split('\n')[0];
  }
  return { tool: t, timedOut: r.timedOut };
}

/** The probes that spawn processes (Linux only): what probe-cache.ts keeps between starts. */
interface ToolProbes {
  bwrap: Tool;
  bwrapUserns: Tool;
  /** `bwrap --help` lists --ro-bind-fd. */
  bwrapBindFd: boolean;
  prlimit: Tool;
  unshare: Tool;
  timedOut: boolean;
}

const BWRAP_MOUNTS = ['--dev', '/dev', '--proc', '/proc'];

async function probeTools(root: boolean, paths: { bwrap?: string; prlimit?: string; unshare?: string }): Promise<ToolProbes> {
  const [bwrap, bwrapUserns, prlimit, unshare, help] = await Promise.all([
    // `--proc`/`--dev` as a tool run mounts them (bwrap-args.ts): where /proc cannot be mounted (systemd's
    // ProtectKernelTunables, some containers) bubblewrap starts but every tool run would fail.
    probeTool('bwrap', paths.bwrap, ['--unshare-all', '--die-with-parent', '--ro-bind', '/', '/', ...BWRAP_MOUNTS, 'true'], ['--version']),
    probeTool('bwrap', paths.bwrap, ['--unshare-user', '--unshare-pid', '--die-with-parent', '--ro-bind', '/', '/', ...BWRAP_MOUNTS, 'true']),
    probeTool('prlimit', paths.prlimit, ['--nofile=64:64', '--', 'true'], ['--version']),
    probeTool('unshare', paths.unshare, root ? ['--net', '--pid', '--fork', 'true'] : ['--user', '--map-root-user', '--net', 'true']),
    paths.bwrap ? run(paths.bwrap, ['--help']) : Promise.resolve(undefined),
  ]);
  return {
    bwrap: bwrap.tool,
    bwrapUserns: bwrapUserns.tool,
    bwrapBindFd: !!help && /^\s*--ro-bind-fd\b/m.test(help.out),
    prlimit: prlimit.tool,
    unshare: unshare.tool,
    timedOut: [bwrap, bwrapUserns, prlimit, unshare].some((p) => p.timedOut),
  };
}

/**
 * `cacheDir`: keep the spawned probes' answer there between starts (probe-cache.ts); without it every layer is
 * probed now. `path`: the host's PATH, where the isolation binaries are looked for before the standard directories.
 */
export async function probeHost(opts: { cgroupParent?: string; cacheDir?: string; now?: number; path?: string } = {}): Promise<HostCapabilities> {
  const uid = typeof process.getuid === 'function' ? process.getuid() : -1;
  const root = uid === 0;
  const linux = process.platform === 'linux';
  const none = (n: string): Tool => ({ works: false, error: `${n}: not Linux` });
  const tools = async (): Promise<ToolProbes> => {
    if (!linux) return { bwrap: none('bwrap'), bwrapUserns: none('bwrap'), bwrapBindFd: false, prlimit: none('prlimit'), unshare: none('unshare'), timedOut: false };
    const paths = { bwrap: whichSync('bwrap', opts.path), prlimit: whichSync('prlimit', opts.path), unshare: whichSync('unshare', opts.path) };
    const fingerprint = probeFingerprint({ binaries: paths, kernel: release(), uid });
    return cachedProbe({ dir: opts.cacheDir, fingerprint, now: opts.now ?? Date.now(), storable: (t) => !t.timedOut }, () => probeTools(root, paths));
  };
  const [{ bwrap, bwrapUserns, bwrapBindFd, prlimit, unshare }, cgroup, sh, environ] = await Promise.all([
    tools(),
    linux ? probeCgroups({ parent: opts.cgroupParent }) : Promise.resolve<{ support?: CgroupSupport; notes: string[] }>({ notes: ['not Linux'] }),
    whichSync('sh', '/bin:/usr/bin'),
    linux ? probeEnviron() : { exposed: [], readable: false },
  ]);
  return {
    platform: process.platform,
    kernel: release(),
    arch: arch(),
    cpus: typeof availableParallelism === 'function' ? availableParallelism() : cpus().length,
    uid,
    root,
    sh,
    bwrap: { ...bwrap, userns: bwrap.works && bwrapUserns.works, bindFd: bwrap.works && bwrapBindFd === true },
    prlimit,
    unshare,
    // Entering a cgroup before exec needs a shell (launch.ts); without one the groups are unusable.
    cgroup: sh || !cgroup.support ? cgroup : { notes: [...cgroup.notes, 'no /bin/sh to enter a cgroup with'] },
    environ,
  };
}

let cached: Promise<HostCapabilities> | undefined;

/**
 * Probed once per process; the spawned probes (seven processes, ~40-400 ms on a loaded board) are kept in the cache
 * directory between starts (probe-cache.ts); the cgroup probe (< 1 ms, no process) runs every time. `env` is the
 * host's environment (its PATH and cache directory); the first call's answer is the process's.
 */
export function detectHost(env: Record<string, string | undefined> = {}): Promise<HostCapabilities> {
  cached ??= probeHost({ cacheDir: cacheDir(env), path: env.PATH });
  return cached;
}
