// `claw doctor`: which isolation layers this board offers and which sandbox features each enables
// (spec §5.8), so an operator sees before a tool call is refused what allow_downgrade would cost.
import type { HostCapabilities } from './host.ts';
import { planIsolation } from './levels.ts';
import { unprotected } from './unprotected.ts';

export interface DoctorLayer {
  name: string;
  available: boolean;
  detail: string;
  enables: string[];
  /** allow_downgrade key that runs the features without this layer (levels.ts), if any. */
  downgradeKey?: string;
}

export interface DoctorJson {
  host: { platform: string; kernel: string; arch: string; cpus: number; uid: number; root: boolean };
  levels: { provided: string[]; notProvided: { level: string; downgradeKey: string }[] };
  layers: DoctorLayer[];
  /** Per provided level, with nothing declared: what it does not protect on this host (docs/security.md). */
  unprotected: { level: string; text: string }[];
  /** Variables (names) the runtime's /proc/<pid>/environ shows besides harmless ones; a tool outside a pid namespace reads them. */
  environExposed?: string[];
}

export function doctorJson(h: HostCapabilities): DoctorJson {
  const cg = h.cgroup.support;
  const layers: DoctorLayer[] = [
    {
      name: 'process group',
      available: h.platform !== 'win32',
      detail: 'spawn detached, kill(-pgid)',
      enables: ['timeout / abort kill of the tool and its children (SIGTERM, grace, SIGKILL)'],
    },
    {
      name: 'bubblewrap',
      available: h.bwrap.works,
      detail: h.bwrap.works ? `${h.bwrap.path} (${h.bwrap.version ?? '?'})${h.bwrap.userns ? ', user namespaces' : ''}${h.bwrap.bindFd ? ', binds by fd' : ', no --ro-bind-fd: binds by path (racy)'}` : (h.bwrap.error ?? 'not found'),
      enables: ['network deny (--unshare-net)', 'filesystem deny / read-only / scoped, denied_paths', 'setsid() escapes die with the pid namespace'],
      downgradeKey: 'bubblewrap',
    },
    {
      name: 'cgroup pids',
      available: !!cg,
      detail: cg ? `cgroup ${cg.kind} under ${cg.base} (${cg.controllers.join(', ')})` : h.cgroup.notes.join('; ') || 'unavailable',
      enables: [
        'max_processes (pids.max)',
        'kill sweep that reaches setsid() escapes without bubblewrap',
        ...(cg?.controllers.includes('memory') ? ['memory_mb for the whole tool (memory.max)'] : []),
        ...(cg?.controllers.includes('cpu') ? ['cpu_shares (cpu.weight)'] : []),
      ],
      downgradeKey: 'max_processes',
    },
    {
      name: 'user-namespace RLIMIT_NPROC',
      available: h.bwrap.userns && !h.root && h.prlimit.works,
      detail: h.root ? 'not used as root: RLIMIT_NPROC does not apply to uid 0' : h.bwrap.userns ? 'bwrap --unshare-user + prlimit --nproc' : 'needs bubblewrap with user namespaces',
      enables: ['max_processes when no cgroup is writable'],
      downgradeKey: 'max_processes',
    },
    {
      name: 'prlimit',
      available: h.prlimit.works,
      detail: h.prlimit.works ? `${h.prlimit.path}` : (h.prlimit.error ?? 'not found'),
      enables: ['memory_mb per process (RLIMIT_DATA)', 'max_open_files (RLIMIT_NOFILE)', 'CPU-time backstop derived from the timeout (RLIMIT_CPU)'],
      downgradeKey: 'prlimit',
    },
    {
      name: 'unshare',
      available: h.unshare.works,
      detail: `${h.unshare.works ? h.unshare.path : (h.unshare.error ?? 'not found')} (reported only; the runner uses bubblewrap)`,
      enables: [],
    },
  ];
  return {
    host: { platform: h.platform, kernel: h.kernel, arch: h.arch, cpus: h.cpus, uid: h.uid, root: h.root },
    levels: {
      provided: ['none', 'process'],
      notProvided: ['wasm', 'container', 'vm'].map((level) => ({ level, downgradeKey: level })),
    },
    layers,
    unprotected: (['none', 'process'] as const).map((level) => {
      const r = planIsolation({ level }, h, { bubblewrap: 'none' });
      return { level, text: r.ok ? unprotected(r.plan, { level }, h) : r.message };
    }),
    ...(h.environ?.readable ? { environExposed: h.environ.exposed } : {}),
  };
}

export function doctorReport(h: HostCapabilities): string {
  const j = doctorJson(h);
  const lines = [
    `sandbox: ${j.host.platform} ${j.host.kernel} ${j.host.arch}, ${j.host.cpus} CPU(s), uid ${j.host.uid}${j.host.root ? ' (root)' : ''}`,
    `  levels provided: ${j.levels.provided.join(', ')}; not provided: ${j.levels.notProvided.map((l) => l.level).join(', ')} (refused unless allow_downgrade names them)`,
  ];
  for (const l of j.layers) {
    lines.push(`  [${l.available ? 'x' : ' '}] ${l.name}: ${l.detail}`);
    for (const e of l.enables) lines.push(`        ${l.available ? '+' : '-'} ${e}`);
    if (!l.available && l.downgradeKey && l.enables.length > 0) lines.push(`        (missing: refused unless allow_downgrade: { ${l.downgradeKey}: ... })`);
  }
  lines.push('  what each level does not protect here (docs/security.md):');
  for (const u of j.unprotected) lines.push(`    - ${u.text}`);
  if (j.environExposed) {
    lines.push(
      j.environExposed.length > 0
        ? `  runtime environment: /proc/<pid>/environ still shows ${j.environExposed.join(', ')}`
        : '  runtime environment: secrets wiped from /proc/<pid>/environ before tools run (values kept in memory only)',
    );
  }
  return `${lines.join('\n')}\n`;
}
