// Which sandbox levels and features this board can honour (spec §5.8 isolation levels, §10.3 "a
// Tool cannot exceed its Sandbox constraints"). `none` and `process` are provided; `wasm`,
// `container` and `vm` are not. Nothing is ever downgraded silently: a level or feature this board
// lacks is refused unless the runtime configuration names the downgrade (`allow_downgrade`), and
// then every downgrade comes back as a note for the log.
//
// Downgrade keys (runtime configuration `allow_downgrade`, see DOWNGRADES):
//   wasm | container | vm : process | none   run at that level instead
//   bubblewrap            : none             run without namespaces: network deny, filesystem
//                                            scoping and setsid protection are NOT enforced
//   max_processes         : none             run without a fork bound
//   prlimit               : none             run without memory_mb / max_open_files
//   network-allowlist     : deny | allow-all an exec/MCP tool cannot be held to a host allowlist
//                                            at process level; choose one of the two enforceable modes
//   ssrf_protection       : none             an exec/MCP tool with network allow-all whose sandbox
//                                            declares ssrf_protection runs WITHOUT the SSRF guard (it
//                                            guards the runtime's own requests only); declare network
//                                            deny instead to cut it off
//
// What a plan does NOT protect is said in one line by unprotected.ts, logged at STARTING and listed per
// level by `claw doctor` (docs/security.md).
import type { SandboxSpec } from '../manifest/schema/index.ts';
import type { HostCapabilities, PrivatePaths } from './host.ts';
import { deniedPaths, effectiveTimeout, fsMode, limit, mountPaths, netMode, type NetMode } from './spec-view.ts';

export const DOWNGRADES: Readonly<Record<string, readonly string[]>> = {
  wasm: ['process', 'none'],
  container: ['process', 'none'],
  vm: ['process', 'none'],
  bubblewrap: ['none'],
  max_processes: ['none'],
  prlimit: ['none'],
  'network-allowlist': ['deny', 'allow-all'],
  ssrf_protection: ['none'],
};

/** For the runtime configuration loader: one message per invalid entry. */
export function validateDowngrades(map: Record<string, string>): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(map)) {
    const allowed = DOWNGRADES[k];
    if (!allowed) out.push(`allow_downgrade: unknown key "${k}" (known: ${Object.keys(DOWNGRADES).join(', ')})`);
    else if (!allowed.includes(v)) out.push(`allow_downgrade.${k}: "${v}" is not one of ${allowed.join(', ')}`);
  }
  return out;
}

const MISSING: Record<string, string> = {
  wasm: 'claw-edge has no WebAssembly sandbox runtime (wasmtime)',
  container: 'claw-edge does not drive a container runtime (docker, apple-container, gvisor)',
  vm: 'claw-edge has no virtual-machine isolation (firecracker)',
};

/** How a tool's processes are confined; the runner executes exactly this. */
export interface IsolationPlan {
  level: 'none' | 'process';
  /** Run under bubblewrap (namespaces, mounts). */
  bwrap: boolean;
  network: Exclude<NetMode, 'allowlist'>;
  /** Create a per-run cgroup (limits and/or the kill sweep). */
  cgroup: boolean;
  /** How max_processes is bounded. */
  pids?: { by: 'cgroup' | 'userns-nproc'; max: number };
  /** RLIMIT_DATA in bytes (per process), and the cgroup v2 memory.max (whole tool). */
  memory?: { rlimit?: number; cgroup?: number };
  nofile?: number;
  /** RLIMIT_CPU seconds: a backstop for the wall-clock timeout, never the first to fire. */
  cpuSeconds?: number;
  cpuWeight?: number;
  prlimit: boolean;
  /** The runtime's own files, hidden from every bubblewrap bind (bwrap-args.ts). */
  hide?: PrivatePaths;
  notes: string[];
}

/** paths.ts `within`, repeated: importing it would pull the path checker into the start-up code (docs/startup.md). */
const within = (p: string, dir: string) => dir === '/' || p === dir || p.startsWith(`${dir}/`);
/** paths.ts `OWN_MOUNTS`, for the same reason: where the sandbox mounts its own (a mount_path there is refused). */
const OWN_MOUNTS = ['/proc', '/dev'];

export const movableMessage = (p: string, a: string) =>
  `${p} (the runtime's own files) lies below ${a}, which this sandbox lets the tool rename: moved aside, they would show to the next tool. Make that mount_path ro, or add ${a} as a ro mount_path`;

/** A mount_path in the sandbox's own /proc or /dev (bwrap-args.ts, and `claw validate`). */
export const ownMountMessage = (p: string, own: string) => `mount_path ${p} is inside ${own}: the sandbox mounts its own ${own} (the host's would show its processes or devices)`;

/**
 * A directory of the sandbox's view above the mask at `at` (a runtime file or directory shown by a bind) that the
 * tool could rename: one that is no mount point (`mountPoints`: bind destinations and masks) and whose parent the
 * last bind showing it makes writable. A mask hides a path only in the sandbox it was made for: a tool that moves
 * data_dir's parent aside (`mv /srv/claw /srv/x` under a `/srv` rw mount) leaves the runtime's files unmasked at
 * their new path for the next sandbox (and the runtime a fresh data_dir to fill). A mount point cannot be renamed
 * (EBUSY), so a data_dir directly inside an rw mount_path, or below a read-only mount inside it, is safe.
 * `binds` in mount order (later ones cover earlier ones). The shallowest such directory; undefined: none.
 */
export function movableAncestor(at: string, binds: readonly { dest: string; rw: boolean }[], mountPoints: ReadonlySet<string>): string | undefined {
  let found: string | undefined;
  for (let a = at.slice(0, at.lastIndexOf('/')); a.length > 0; a = a.slice(0, a.lastIndexOf('/'))) {
    if (mountPoints.has(a)) continue;
    const parent = a.slice(0, a.lastIndexOf('/')) || '/';
    let shown: { dest: string; rw: boolean } | undefined;
    for (let k = binds.length - 1; k >= 0 && !shown; k--) if (within(parent, binds[k].dest)) shown = binds[k];
    if (shown?.rw) found = a; // the shallowest one: a read-only mount_path there covers every one below it
  }
  return found;
}

export type PlanResult = { ok: true; plan: IsolationPlan } | { ok: false; message: string };

/**
 * `use`: `exec` for anything that runs as a child process (exec and MCP tools, OS-touching builtins
 * under `level: process`); `builtin` for in-process builtins, which enforce filesystem and network
 * themselves (checkPath, the network guard) and need no process mechanism.
 */
export function planIsolation(
  spec: SandboxSpec,
  host: HostCapabilities,
  allow: Record<string, string> = {},
  use: 'exec' | 'builtin' = 'exec',
  toolTimeoutMs?: number,
): PlanResult {
  const notes: string[] = [];
  const refuse = (message: string): PlanResult => ({ ok: false, message });
  let level: string = spec.level;
  if (level === 'wasm' || level === 'container' || level === 'vm') {
    const d = allow[level];
    if (d !== 'process' && d !== 'none') {
      return refuse(
        `sandbox level "${level}" is not available on this board (${host.arch}, Linux ${host.kernel}): ${MISSING[level]}. ` +
          `Levels provided: none, process. To run it as a process sandbox anyway, set allow_downgrade: { ${level}: process } in the runtime configuration.`,
      );
    }
    notes.push(`sandbox level "${level}" downgraded to "${d}" (allow_downgrade.${level})`);
    level = d;
  }
  const lvl = level as 'none' | 'process';
  const plan: IsolationPlan = { level: lvl, bwrap: false, network: 'allow-all', cgroup: false, prlimit: false, notes };
  if (use === 'builtin') {
    plan.network = netMode(spec) === 'deny' ? 'deny' : 'allow-all';
    notes.push('in-process builtin: filesystem and network are enforced by the path check and the network guard');
    return { ok: true, plan };
  }

  let net = netMode(spec);
  if (net === 'allowlist') {
    const d = allow['network-allowlist'];
    if (d !== 'deny' && d !== 'allow-all') {
      return refuse(
        'network mode "allowlist" cannot be enforced on a child process (exec/MCP tool): host allowlists and SSRF checks apply to the runtime\'s own requests only. ' +
          'Set allow_downgrade: { network-allowlist: deny } (no network) or { network-allowlist: allow-all } in the runtime configuration.',
      );
    }
    notes.push(`network allowlist enforced as "${d}" for this child process (allow_downgrade.network-allowlist)`);
    net = d;
  }
  plan.network = net;
  const ssrf = spec.capabilities?.network?.ssrf_protection;
  if (net === 'allow-all' && ssrf && ssrf.enabled !== false) {
    if (allow.ssrf_protection !== 'none') {
      return refuse(
        'ssrf_protection cannot be enforced on a child process (exec/MCP tool) with network allow-all: the SSRF guard checks the runtime\'s own requests only, and the tool could reach loopback, private and metadata addresses. ' +
          'Declare network mode "deny" for this sandbox, or set allow_downgrade: { ssrf_protection: none } in the runtime configuration to run it without the guard.',
      );
    }
    notes.push('ssrf_protection NOT enforced for this child process: it can reach loopback, private and metadata addresses (allow_downgrade.ssrf_protection)');
  }

  const fm = fsMode(spec);
  if (fm === 'scoped') {
    // The sandbox mounts its own /proc and /dev (bwrap-args.ts): checked on the paths as written here, on real paths at launch.
    for (const m of mountPaths(spec)) {
      const own = OWN_MOUNTS.find((d) => within(m.path.replace(/\/{2,}/g, '/'), d));
      if (own) return refuse(ownMountMessage(m.path, own));
    }
  }
  const priv = host.private;
  if (priv && fm === 'scoped') {
    // Checked on the paths as written here (STARTING); bwrap-args.ts checks the real paths at every launch.
    for (const m of mountPaths(spec)) {
      const inside = priv.dirs.find((d) => within(m.path, d) && !priv.shared.some((s) => within(s, d) && within(m.path, s)));
      if (inside) return refuse(`mount_path ${m.path} is inside ${inside}, a directory of the runtime itself (secrets, data_dir): no tool may see it. Share files through data_dir/workspace or another directory.`);
      const file = priv.files.find((f) => f === m.path);
      if (file) return refuse(`mount_path ${m.path} is the runtime configuration: no tool may see it`);
    }
    const binds = mountPaths(spec).map((m) => ({ dest: m.path, rw: m.permissions === 'rw' }));
    const own = [...priv.dirs, ...priv.files].filter((p) => binds.some((b) => within(p, b.dest)));
    const points = new Set([...binds.map((b) => b.dest), ...own]);
    for (const p of own) {
      const a = movableAncestor(p, binds, points);
      if (a) return refuse(movableMessage(p, a));
    }
  }
  const needsNs: string[] = [];
  if (net === 'deny') needsNs.push('network deny');
  if (fm !== 'full') needsNs.push(`filesystem ${fm}`);
  if (deniedPaths(spec).length > 0) needsNs.push('denied_paths');
  // A grandchild that calls setsid() leaves the process group; a pid namespace or a cgroup still
  // holds it. Level `none` asks for no isolation, so it does not require this.
  const cg = host.cgroup.support;
  if (lvl === 'process' && !cg) needsNs.push('protection against setsid() escapes');
  if (needsNs.length > 0 && !host.bwrap.works) {
    if (allow.bubblewrap !== 'none') {
      return refuse(
        `this sandbox needs bubblewrap for ${needsNs.join(', ')}, and this board has no working bubblewrap (${host.bwrap.error ?? 'unknown'}). ` +
          'Install bubblewrap, or set allow_downgrade: { bubblewrap: none } in the runtime configuration to run without it (those features are then NOT enforced).',
      );
    }
    notes.push(`bubblewrap unavailable: NOT enforced: ${needsNs.join(', ')} (allow_downgrade.bubblewrap)`);
  }
  plan.bwrap = host.bwrap.works && (lvl === 'process' || needsNs.length > 0);
  if (plan.bwrap && priv) plan.hide = priv;
  if (plan.bwrap) {
    // Say what bubblewrap is used for, so the log shows every layer in force, not only downgrades.
    notes.push(`bubblewrap: pid namespace (setsid escapes die with it)${net === 'deny' ? ', no network' : ''}, filesystem ${fm}${deniedPaths(spec).length ? ', denied_paths masked' : ''}`);
  }
  if (!plan.bwrap && net === 'deny') plan.network = 'allow-all';
  if (lvl === 'process' && !plan.bwrap && cg) notes.push(`setsid() escapes are caught by the cgroup sweep (cgroup ${cg.kind}), not by a pid namespace`);

  const maxProc = limit(spec, 'max_processes');
  if (maxProc !== undefined) {
    if (cg) {
      // +2: the outer bubblewrap process and its pid-1 reaper live in the group too.
      plan.pids = { by: 'cgroup', max: maxProc + (plan.bwrap ? 2 : 0) };
      notes.push(`max_processes ${maxProc}: cgroup ${cg.kind} pids.max (counts tasks, threads included)`);
    } else if (plan.bwrap && host.bwrap.userns && !host.root && host.prlimit.works) {
      // RLIMIT_NPROC is counted per user namespace (Linux ≥ 5.14 ucounts), so set inside a fresh
      // one it bounds this tool alone. +1 for bubblewrap's pid-1 reaper.
      plan.pids = { by: 'userns-nproc', max: maxProc + 1 };
      notes.push(`max_processes ${maxProc}: RLIMIT_NPROC inside a bubblewrap user namespace (counts tasks, threads included)`);
    } else if (allow.max_processes === 'none') {
      notes.push(`max_processes ${maxProc}: NOT enforced (allow_downgrade.max_processes)`);
    } else {
      return refuse(
        `max_processes needs a writable cgroup pids controller${host.root ? '' : ' or bubblewrap with user namespaces'}; this board has neither ` +
          `(${[...host.cgroup.notes, host.root ? 'RLIMIT_NPROC does not apply to root' : `bubblewrap: ${host.bwrap.error ?? 'no user namespaces'}`].join('; ')}). ` +
          'Set allow_downgrade: { max_processes: none } to run without a fork bound.',
      );
    }
  }

  const mem = limit(spec, 'memory_mb');
  const nofile = limit(spec, 'max_open_files');
  const cgMem = cg?.controllers.includes('memory') ?? false;
  if ((mem !== undefined || nofile !== undefined) && !host.prlimit.works) {
    const lacking = [nofile !== undefined ? 'max_open_files' : '', mem !== undefined && !cgMem ? 'memory_mb' : ''].filter(Boolean);
    if (lacking.length > 0 && allow.prlimit !== 'none') {
      return refuse(
        `${lacking.join(' and ')} need prlimit (util-linux), which this board lacks (${host.prlimit.error ?? 'unknown'}). Set allow_downgrade: { prlimit: none } to run without.`,
      );
    }
    if (lacking.length > 0) notes.push(`NOT enforced: ${lacking.join(', ')} (allow_downgrade.prlimit)`);
  }
  if (mem !== undefined) {
    plan.memory = {};
    if (host.prlimit.works) {
      // RLIMIT_DATA, never RLIMIT_AS: address-space limits break Node and WASM (ARCHITECTURE.md).
      plan.memory.rlimit = mem * 1024 * 1024;
      notes.push(`memory_mb ${mem}: RLIMIT_DATA per process`);
    }
    if (cgMem) {
      plan.memory.cgroup = mem * 1024 * 1024;
      notes.push(`memory_mb ${mem}: cgroup v2 memory.max for the whole tool`);
    }
  }
  if (nofile !== undefined && host.prlimit.works) plan.nofile = nofile;
  const timeout = effectiveTimeout(spec, toolTimeoutMs);
  if (timeout !== undefined && host.prlimit.works) {
    // A process cannot use more CPU than cores × wall time, so this never fires before the timer;
    // it kills a spinning orphan if this runtime itself is stopped without cleaning up.
    plan.cpuSeconds = Math.ceil((timeout / 1000) * Math.max(1, host.cpus)) + 1;
  }
  const shares = limit(spec, 'cpu_shares');
  if (shares !== undefined) {
    if (cg?.controllers.includes('cpu')) {
      plan.cpuWeight = Math.min(10000, Math.max(1, Math.round((shares * 100) / 1024)));
      notes.push(`cpu_shares ${shares}: cgroup v2 cpu.weight ${plan.cpuWeight}`);
    } else {
      notes.push(`cpu_shares ${shares}: not enforced (a relative scheduling weight; no cgroup v2 cpu controller here)`);
    }
  }
  plan.prlimit = host.prlimit.works && (plan.memory?.rlimit !== undefined || plan.nofile !== undefined || plan.cpuSeconds !== undefined || plan.pids?.by === 'userns-nproc');
  plan.cgroup = !!cg && (plan.pids?.by === 'cgroup' || plan.memory?.cgroup !== undefined || plan.cpuWeight !== undefined || (lvl === 'process' && !plan.bwrap));
  return { ok: true, plan };
}

export type LevelCheck = { ok: true; level: 'none' | 'process'; notes: string[] } | { ok: false; message: string };

/** The gate's question: can this board run a tool under `spec`? Notes are to be logged. */
export function checkLevel(
  spec: SandboxSpec,
  host: HostCapabilities,
  allowDowngrade?: Record<string, string>,
  use: 'exec' | 'builtin' = 'exec',
): LevelCheck {
  const r = planIsolation(spec, host, allowDowngrade, use);
  return r.ok ? { ok: true, level: r.plan.level, notes: r.plan.notes } : r;
}
