// A `context.sandbox` override in claw.tool.call "can only narrow what the manifest allows, never
// widen it" (issue 3; spec §9.3.2 context.sandbox). narrowSandbox(a, b) is the intersection: every
// capability takes the more restrictive side, lists of grants intersect, lists of bans unite,
// limits take the minimum. narrowSandbox(a, b) never allows anything a alone would not.
import type { SandboxSpec } from '../manifest/schema/index.ts';

type Caps = NonNullable<SandboxSpec['capabilities']>;
type Net = NonNullable<Caps['network']>;
type Fs = NonNullable<Caps['filesystem']>;
type Shell = NonNullable<Caps['shell']>;
type Secrets = NonNullable<Caps['secrets']>;

const LEVELS = ['none', 'process', 'wasm', 'container', 'vm'] as const;
const NET = ['deny', 'allowlist', 'allow-all'] as const;
const FS = ['deny', 'read-only', 'scoped', 'full'] as const;
const SHELL = ['deny', 'restricted', 'full'] as const;
const INJECTION = ['host-boundary', 'file-mount', 'environment'] as const;

/** The more restrictive of two enum values, by position in `order` (most restrictive first). */
function tighter<T extends string>(order: readonly T[], a: T | undefined, b: T | undefined): T | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return order.indexOf(a) <= order.indexOf(b) ? a : b;
}

const minDefined = (a?: number, b?: number) => (a === undefined ? b : b === undefined ? a : Math.min(a, b));
const union = (a?: string[], b?: string[]) => (a || b ? [...new Set([...(a ?? []), ...(b ?? [])])] : undefined);

/** Does host pattern `outer` allow everything `inner` allows? (`*.x.com` covers `a.x.com` and `*.a.x.com`.) */
function covers(outer: string, inner: string): boolean {
  const o = outer.toLowerCase().replace(/\.$/, '');
  const i = inner.toLowerCase().replace(/\.$/, '');
  if (o === i) return true;
  if (!o.startsWith('*.')) return false;
  const suffix = o.slice(1); // ".x.com"
  return i.endsWith(suffix) && i.length > suffix.length;
}

function narrowNetwork(a?: Net, b?: Net): Net | undefined {
  if (!a && !b) return undefined;
  // An absent network block is the manifest's default; treat it as unrestricted only when both are.
  const mode = tighter(NET, a?.mode, b?.mode);
  const out: Net = { ...(mode ? { mode } : {}) };
  if (mode === 'allowlist') {
    const la = a?.mode === 'allowlist' ? (a.allowed_hosts ?? []) : undefined;
    const lb = b?.mode === 'allowlist' ? (b.allowed_hosts ?? []) : undefined;
    if (la && lb) out.allowed_hosts = [...la.filter((h) => lb.some((g) => covers(g, h))), ...lb.filter((h) => la.some((g) => covers(g, h)))].filter((h, i, all) => all.indexOf(h) === i);
    else out.allowed_hosts = la ?? lb ?? [];
  }
  const sa = a?.ssrf_protection;
  const sb = b?.ssrf_protection;
  if (sa || sb) {
    out.ssrf_protection = {
      // Protection is on unless both sides turned it off explicitly.
      enabled: sa?.enabled !== false || sb?.enabled !== false,
      block_private_ips: sa?.block_private_ips !== false || sb?.block_private_ips !== false,
      dns_pinning: sa?.dns_pinning !== false || sb?.dns_pinning !== false,
    };
  }
  return out;
}

function within(path: string, dir: string): boolean {
  const d = dir.endsWith('/') ? dir : `${dir}/`;
  return path === dir || path.startsWith(d);
}

function narrowFs(a?: Fs, b?: Fs): Fs | undefined {
  if (!a && !b) return undefined;
  const mode = tighter(FS, a?.mode, b?.mode);
  const out: Fs = { ...(mode ? { mode } : {}) };
  const denied = union(a?.denied_paths, b?.denied_paths);
  if (denied) out.denied_paths = denied;
  if (mode === 'scoped') {
    const ma = a?.mode === 'scoped' ? (a.mount_paths ?? []) : undefined;
    const mb = b?.mode === 'scoped' ? (b.mount_paths ?? []) : undefined;
    let mounts = ma && mb ? intersectMounts(ma, mb) : (ma ?? mb ?? []);
    // The other side being read-only makes every mount read-only.
    if ((a?.mode === 'read-only' || b?.mode === 'read-only')) mounts = mounts.map((m) => ({ ...m, permissions: 'ro' as const }));
    out.mount_paths = mounts;
  }
  return out;
}

type Mount = NonNullable<Fs['mount_paths']>[number];
function intersectMounts(a: Mount[], b: Mount[]): Mount[] {
  const out: Mount[] = [];
  for (const x of a) {
    for (const y of b) {
      // The deeper of two nested mounts is the intersection; disjoint mounts contribute nothing.
      const inner = within(x.path, y.path) ? x : within(y.path, x.path) ? y : undefined;
      if (!inner) continue;
      const permissions = x.permissions === 'ro' || y.permissions === 'ro' ? 'ro' : 'rw';
      if (!out.some((m) => m.path === inner.path && m.permissions === permissions)) out.push({ path: inner.path, permissions });
    }
  }
  return out;
}

function narrowShell(a?: Shell, b?: Shell): Shell | undefined {
  if (!a && !b) return undefined;
  const mode = tighter(SHELL, a?.mode, b?.mode);
  const out: Shell = { ...(mode ? { mode } : {}) };
  const cmds = union(a?.blocked_commands, b?.blocked_commands);
  const pats = union(a?.blocked_patterns, b?.blocked_patterns);
  if (cmds) out.blocked_commands = cmds;
  if (pats) out.blocked_patterns = pats;
  return out;
}

function narrowSecrets(a?: Secrets, b?: Secrets): Secrets | undefined {
  if (!a && !b) return undefined;
  const injection = tighter(INJECTION, a?.injection, b?.injection);
  return { ...a, ...b, ...(injection ? { injection } : {}) };
}

export function narrowSandbox(a: SandboxSpec, b: SandboxSpec): SandboxSpec {
  const level = tighter([...LEVELS].reverse(), a.level, b.level)!; // stronger isolation wins
  const ca = a.capabilities ?? {};
  const cb = b.capabilities ?? {};
  const capabilities: Caps = {};
  const network = narrowNetwork(ca.network, cb.network);
  const filesystem = narrowFs(ca.filesystem, cb.filesystem);
  const shell = narrowShell(ca.shell, cb.shell);
  const secrets = narrowSecrets(ca.secrets, cb.secrets);
  if (network) capabilities.network = network;
  if (filesystem) capabilities.filesystem = filesystem;
  if (shell) capabilities.shell = shell;
  if (secrets) capabilities.secrets = secrets;
  const ra = a.resource_limits ?? {};
  const rb = b.resource_limits ?? {};
  const limits: Record<string, number> = {};
  for (const k of new Set([...Object.keys(ra), ...Object.keys(rb)])) {
    const v = minDefined((ra as any)[k], (rb as any)[k]);
    if (v !== undefined) limits[k] = v;
  }
  const out: SandboxSpec = { level, capabilities };
  if (a.runtime ?? b.runtime) out.runtime = level === a.level ? (a.runtime ?? b.runtime) : (b.runtime ?? a.runtime);
  if (Object.keys(limits).length > 0) out.resource_limits = limits as SandboxSpec['resource_limits'];
  return out;
}
