// Starting one sandboxed process: plan (levels.ts) → private dirs, secrets, cgroup → command chain
//   [sh: enter cgroup, exec | sh: wait until the run is recorded, exec] → [bwrap … --] → [prlimit … --] → tool
// Each layer execs the next, so the tool ends up with the pid we spawned when neither cgroup entry
// nor bubblewrap is needed. prlimit runs inside bubblewrap: the limits then apply to the tool only,
// and RLIMIT_NPROC is counted in the sandbox's own user namespace.
import type { ChildProcess } from 'node:child_process';
import type { Writable } from 'node:stream';
import { childProcess } from '../node/lazy.ts';
import { accessSync, closeSync, constants, openSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, readdir, realpath, rm, stat } from 'node:fs/promises';
import { constants as os, tmpdir } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import type { SandboxSpec } from '../manifest/schema/index.ts';
import { ClawError } from '../protocol/errors.ts';
import { bwrapArgs } from './bwrap-args.ts';
import { createRunCgroup, type RunCgroup } from './cgroup.ts';
import { buildEnv, DEFAULT_PATH, writeSecretFiles } from './env.ts';
import { whichSync, type HostCapabilities } from './host.ts';
import { planIsolation, type IsolationPlan } from './levels.ts';
import { checkPath, within } from './paths.ts';
import { readProc } from './proc-table.ts';
import { ownPidNamespace, PRIVATE_DIR_NAME, privateParent, returnRunDir, takeRunDir } from './run-dirs.ts';
import { cgroupRecord, type RunRecords } from './run-records.ts';
import { fsMode, injectionMode, mountPaths } from './spec-view.ts';

export interface LaunchOptions {
  bin: string;
  argv: string[];
  /** The environment allowlisted variables are taken from (the runtime's own, passed by the target). */
  env: Record<string, string | undefined>;
  /** Non-secret variables the tool binding sets explicitly; added as given. */
  extraEnv?: Record<string, string>;
  /** Secret values by variable name, injected per `capabilities.secrets.injection`. */
  secrets?: Record<string, string>;
  /** Where the tool should start; honoured only inside the sandbox's scope (see resolveCwd). */
  cwd?: string;
  sandbox: SandboxSpec;
  host: HostCapabilities;
  /** The runtime configuration's `allow_downgrade` (levels.ts). */
  allowDowngrade?: Record<string, string>;
  /** Tool `timeout_ms` (spec §5.4); combined with resource_limits.timeout_ms. */
  timeoutMs?: number;
  /** Files the child must be able to read even under a strict filesystem scope. */
  readOnlyBinds?: string[];
  /** Parent of the per-run private directories (default: os.tmpdir()). */
  tmpRoot?: string;
  /**
   * Where runs without bubblewrap are recorded so that the next start kills what a crashed runtime
   * left running (run-records.ts, orphans.ts). Absent: nothing is recorded.
   */
  records?: RunRecords;
}

export interface Launched {
  child: ChildProcess;
  plan: IsolationPlan;
  cgroup?: RunCgroup;
  /** Settles when the OS has started the process (or failed to: ENOENT, EACCES). */
  spawned: Promise<void>;
  /**
   * Remove the private directories, the secret files and the cgroup. `reuseRunDir`: the tool exited on
   * its own (nothing was killed), so its run directory may serve the next run if it left it empty
   * (run-dirs.ts); a killed tool's is always removed.
   */
  cleanup(o?: { reuseRunDir?: boolean }): Promise<void>;
}

/** Enter each cgroup.procs file given before `--`, then exec the rest. POSIX sh, no bashisms. */
const ENTER_CGROUP = 'while [ "$#" -gt 0 ] && [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"';

/**
 * Wait for one line on fd 3 (the runtime writes it once the run is recorded), close fd 3, exec the rest.
 * If the runtime dies first, fd 3 reads end-of-file and the tool never starts.
 */
const AWAIT_RECORD = 'read -r _go <&3 || exit 125; exec 3<&-; exec "$@"';

// The binary lookup is synchronous: a few access(2) calls (microseconds), while fs/promises sends every
// one through the libuv thread pool and back. Run directories: run-dirs.ts.
// A relative `bin` (`./x`, `sub/x`) is found from the tool's working directory, as execvp in the child
// would and as the shell builtin's restricted-mode check (shell-interpreter.ts) judges it — never from
// the runtime's own cwd, where a different file of the same name would run unjudged.
function resolveBin(bin: string, pathVar: string, cwd: string | undefined): string | undefined {
  if (!bin.includes('/')) return whichSync(bin, pathVar);
  const abs = cwd ? resolve(cwd, bin) : resolve(bin);
  try {
    accessSync(abs, constants.X_OK);
    return abs;
  } catch {
    return undefined;
  }
}

/**
 * deny: always the private dir. scoped: the caller's cwd if it lies inside a mount, else the first
 * `rw` mount (created if missing), else the private dir. read-only / full: the caller's cwd if given.
 */
async function resolveCwd(spec: SandboxSpec, cwd: string | undefined, workdir: string): Promise<string> {
  const fm = fsMode(spec);
  if (fm === 'deny') return workdir;
  if (fm === 'scoped') {
    if (cwd && (await checkPath(cwd, 'read', spec.capabilities?.filesystem, '/')).ok) return resolve(cwd);
    const rw = mountPaths(spec).find((m) => m.permissions === 'rw');
    if (rw) {
      const p = resolve(rw.path);
      await mkdir(p, { recursive: true });
      return p;
    }
    return workdir;
  }
  if (!cwd) return workdir;
  const dir = resolve(cwd);
  const st = await stat(dir).catch(() => undefined);
  if (!st?.isDirectory()) throw new ClawError('sandbox-cwd', `working directory ${dir} does not exist`);
  return dir;
}

function prlimitArgs(plan: IsolationPlan): string[] {
  const a: string[] = [];
  if (plan.memory?.rlimit !== undefined) a.push(`--data=${plan.memory.rlimit}:${plan.memory.rlimit}`);
  if (plan.nofile !== undefined) a.push(`--nofile=${plan.nofile}:${plan.nofile}`);
  if (plan.cpuSeconds !== undefined) a.push(`--cpu=${plan.cpuSeconds}:${plan.cpuSeconds + 1}`);
  if (plan.pids?.by === 'userns-nproc') a.push(`--nproc=${plan.pids.max}:${plan.pids.max}`);
  return a;
}

/**
 * Descriptors this process inherited without close-on-exec (a supervisor's or shell's pipe, socket or lock file):
 * every child would inherit them too, through bubblewrap, which closes nothing — a tool could write to its
 * parent's pipe or talk through its socket past every namespace. Node opens everything close-on-exec, so the set
 * is read once (/proc/self/fdinfo: O_CLOEXEC in `flags`). Each is replaced by /dev/null in the child (its stdio
 * slot dup2s over it), never closed here: the fd may mean something to whoever started us (a flock).
 */
let inherited: { fds: number[]; devNull?: number } | undefined;
const O_CLOEXEC = 0o2000000;

function inheritedFds(): { fds: number[]; devNull?: number } {
  if (inherited) return inherited;
  const fds: number[] = [];
  let names: string[] = [];
  try {
    names = readdirSync('/proc/self/fd');
  } catch {
    // not Linux, or /proc not mounted: nothing known to replace
  }
  for (const n of names) {
    const fd = Number(n);
    if (!Number.isInteger(fd) || fd < 3) continue;
    try {
      const flags = /^flags:\s+([0-7]+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1];
      if (flags !== undefined && (parseInt(flags, 8) & O_CLOEXEC) === 0) fds.push(fd);
    } catch {
      // closed since the listing (the listing's own descriptor)
    }
  }
  let devNull: number | undefined;
  try {
    if (fds.length > 0) devNull = openSync('/dev/null', constants.O_RDONLY);
  } catch {
    // no /dev/null to put there: the descriptors stay as they are
  }
  inherited = { fds: devNull === undefined ? [] : fds, devNull };
  return inherited;
}

/** The child's stdio: the pipes, bubblewrap's bind fds from fd 3 on, and /dev/null over every inherited descriptor. */
function childStdio(pipes: number, bindFds: number[]): ('pipe' | 'ignore' | number)[] {
  const stdio: ('pipe' | 'ignore' | number)[] = Array.from({ length: pipes }, () => 'pipe' as const);
  bindFds.forEach((fd, k) => (stdio[3 + k] = fd));
  const inh = inheritedFds();
  for (const fd of inh.fds) if (stdio[fd] === undefined) stdio[fd] = inh.devNull!;
  for (let k = 0; k < stdio.length; k++) stdio[k] ??= 'ignore';
  return stdio;
}

const swept = new Set<string>();

/** Private dirs of a runtime that was killed mid-call (its pid is gone): removed once per process. */
async function removeStaleRunDirs(root: string): Promise<void> {
  if (swept.has(root)) return;
  swept.add(root);
  for (const n of await readdir(root).catch((): string[] => [])) {
    const [, pid, ns] = PRIVATE_DIR_NAME.exec(n) ?? [];
    if (!pid || Number(pid) === process.pid) continue;
    // Made in another pid namespace (a container sharing this /tmp): its pid cannot be checked from here,
    // and a live runtime's directories must not go. Left to that runtime, or the host's tmp cleaner.
    if (ns !== undefined && ns !== ownPidNamespace()) continue;
    try {
      process.kill(Number(pid), 0);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ESRCH') await rm(resolve(root, n), { recursive: true, force: true }).catch(() => undefined);
    }
  }
}

/**
 * Every claw runtime's private directories in `root` (real paths; this process's parent first): what a
 * tool under bubblewrap must not see of other calls (bwrap-args.ts hideOtherRuns). Another runtime's
 * directory made after the tool started is not covered; this process's later calls are, inside its parent.
 */
async function privateDirsIn(root: string): Promise<{ own: string; all: string[] }> {
  const own = await realpath(privateParent(root));
  const all = [own];
  for (const e of await readdir(root, { withFileTypes: true }).catch(() => [])) {
    if (!e.isDirectory() || !PRIVATE_DIR_NAME.test(e.name)) continue;
    const p = await realpath(resolve(root, e.name)).catch(() => undefined);
    if (p && p !== own) all.push(p);
  }
  return { own, all };
}

export async function launch(o: LaunchOptions): Promise<Launched | { notFound: string }> {
  const r = planIsolation(o.sandbox, o.host, o.allowDowngrade, 'exec', o.timeoutMs);
  if (!r.ok) throw new ClawError('sandbox-unavailable', r.message);
  const plan = r.plan;
  const pathVar = o.env.PATH ?? DEFAULT_PATH;
  const bin = resolveBin(o.bin, pathVar, o.cwd);
  if (!bin) return { notFound: o.bin };

  const undo: (() => Promise<unknown>)[] = [];
  let reuseRunDir = false;
  const cleanup = async (o?: { reuseRunDir?: boolean }) => {
    reuseRunDir = o?.reuseRunDir === true;
    for (const u of undo.reverse()) await u().catch(() => undefined);
    undo.length = 0;
  };
  try {
    const root = o.tmpRoot ?? tmpdir();
    await removeStaleRunDirs(root);
    const workdir = takeRunDir(root);
    undo.push(() => returnRunDir(root, workdir, reuseRunDir));
    const secrets = o.secrets ?? {};
    const injection = injectionMode(o.sandbox);
    let secretDir: string | undefined;
    if (injection === 'file-mount' && Object.keys(secrets).length > 0) {
      const s = await writeSecretFiles(secrets, root);
      undo.push(s.remove);
      secretDir = s.dir;
    }
    const cwd = await resolveCwd(o.sandbox, o.cwd, workdir);
    const env = buildEnv({ base: o.env, secrets, injection, home: cwd, tmpdir: workdir, secretDir, extra: o.extraEnv });

    let cgroup: RunCgroup | undefined;
    if (plan.cgroup && o.host.cgroup.support && o.host.sh) {
      cgroup = await createRunCgroup(o.host.cgroup.support, {
        pidsMax: plan.pids?.by === 'cgroup' ? plan.pids.max : undefined,
        memoryBytes: plan.memory?.cgroup,
        cpuWeight: plan.cpuWeight,
      });
      const cg = cgroup;
      undo.push(() => cg.remove());
      // The group holds every process of the tool, so recording it before the spawn is enough.
      if (o.records && !plan.bwrap) {
        const { record, base } = cgroupRecord(cg.dir);
        const drop = o.records.add(record, base);
        if (drop) undo.push(async () => drop());
      }
    }

    const prl = plan.prlimit && o.host.prlimit.path ? [o.host.prlimit.path, ...prlimitArgs(plan), '--'] : [];
    let chain: string[] = [...prl, bin, ...o.argv];
    // Bind sources opened by bwrapArgs, closed once the child has them (or on failure, by cleanup).
    const bindFds: number[] = [];
    const closeBindFds = () => {
      for (const fd of bindFds.splice(0)) {
        try {
          closeSync(fd);
        } catch {
          // already closed
        }
      }
    };
    undo.push(async () => closeBindFds());
    if (plan.bwrap && o.host.bwrap.path) {
      const readOnly: [string, string][] = [];
      const add = async (p: string) => {
        const abs = isAbsolute(p) ? p : resolve(p);
        const real = await realpath(abs).catch(() => undefined);
        // System directories are visible in every filesystem mode; anything else is bound by itself.
        const inSystem = (x: string) => ['/usr', '/bin', '/sbin', '/lib', '/lib64'].some((d) => within(x, d));
        if (real && !(inSystem(abs) && inSystem(real))) readOnly.push([real, abs]);
      };
      await add(bin);
      if (prl.length > 0) await add(prl[0]);
      for (const p of o.readOnlyBinds ?? []) await add(p);
      const args = await bwrapArgs({
        spec: o.sandbox,
        plan,
        root: o.host.root,
        workdir,
        cwd,
        secretDir,
        privateDirs: { root: await realpath(root), list: () => privateDirsIn(root) },
        readOnly,
        maskCgroupFs: !!cgroup,
        fds: o.host.bwrap.bindFd ? bindFds : undefined,
      });
      chain = [o.host.bwrap.path, ...args, '--', ...chain];
    }
    if (cgroup) chain = [o.host.sh!, '-c', ENTER_CGROUP, 'claw-enter-cgroup', cgroup.procsFile, '--', ...chain];
    // Without bubblewrap or a cgroup, the record needs the pid: the process waits until it is written.
    const recordPid = !!o.records && !plan.bwrap && !cgroup;
    const gated = recordPid && !!o.host.sh;
    if (gated) chain = [o.host.sh!, '-c', AWAIT_RECORD, 'claw-await-record', ...chain];

    const { spawn } = await childProcess();
    const child = spawn(chain[0], chain.slice(1), {
      detached: true, // own process group: kill(-pid) reaches the whole tree (kill.ts)
      stdio: childStdio(gated ? 4 : 3, bindFds),
      env,
      cwd: plan.bwrap ? '/' : cwd,
    });
    closeBindFds(); // the child has its copies (spawn forks synchronously); bubblewrap closes each after its bind
    const spawned = new Promise<void>((res, rej) => {
      child.once('spawn', res);
      child.once('error', rej);
    });
    spawned.catch(() => undefined); // observed by the caller through its own 'error' handling
    // Out of descriptors (EMFILE, ENFILE: a low `ulimit -n`/`LimitNOFILE=` under many concurrent calls), Node
    // gives up before it makes the pipes — child.stdout is undefined — and reports the error on the next tick.
    // The callers' first use of a pipe then threw a TypeError past their cleanup, leaving the run directory
    // (and a secrets directory or cgroup) behind. Said here, cleaned up by the catch below.
    if (!child.stdin || !child.stdout || !child.stderr) throw await spawnFailure(spawned, o.bin);
    if (recordPid) recordProcess(child, o.records!, gated, undo);
    return { child, plan, cgroup, spawned, cleanup };
  } catch (e) {
    await cleanup();
    throw e;
  }
}

/** The error of a spawn that made no pipes, as the typed error the callers report (a tool result, not a crash). */
async function spawnFailure(spawned: Promise<void>, bin: string): Promise<ClawError> {
  const e = await spawned.then(
    () => new Error('no pipes to the process'),
    (err: unknown) => err as NodeJS.ErrnoException,
  );
  const code = (e as NodeJS.ErrnoException).code;
  const hint = code === 'EMFILE' || code === 'ENFILE' ? ' (too many open files: raise the limit, e.g. LimitNOFILE= in the unit, or run fewer tools at once)' : '';
  return new ClawError('sandbox-spawn', `could not start ${bin}: ${e.message}${hint}`, { cause: e });
}

/** Record the spawned process (pid, start time) and then let it exec the tool (AWAIT_RECORD). */
function recordProcess(child: ChildProcess, records: RunRecords, gated: boolean, undo: (() => Promise<unknown>)[]): void {
  const gate = gated ? (child.stdio[3] as Writable | null) : null;
  gate?.on('error', () => undefined); // EPIPE: the process is already gone
  const start = child.pid ? readProc(child.pid)?.start : undefined;
  if (child.pid && start !== undefined) {
    const drop = records.add({ kind: 'process', pid: child.pid, start });
    if (drop) undo.push(async () => drop());
  }
  gate?.end('\n');
  if (gate) undo.push(async () => gate.destroy());
}

/**
 * bubblewrap reports a child killed by signal N as exit status 128+N. When we sent the signals
 * (timeout, abort, kill()), read it back as the signal so results look the same with and without it.
 */
export function normaliseStatus(bwrap: boolean, weSignalled: boolean, code: number | null, signal: string | null): { exitCode: number | null; signal: string | null } {
  if (bwrap && weSignalled && code !== null && code > 128 && code < 128 + 65) {
    const name = Object.entries(os.signals).find(([, n]) => n === code - 128)?.[0];
    if (name) return { exitCode: null, signal: name };
  }
  return { exitCode: code, signal };
}
