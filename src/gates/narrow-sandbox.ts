// A `context.sandbox` override in claw.tool.call "can only narrow what the manifest allows, never
// widen it" (spec §9.3.2 context.sandbox). narrowSandbox(a, b) is the intersection: both
// sides are first read the way every consumer reads them (src/sandbox/spec-view.ts: an absent network
// mode is `allow-all` with the SSRF guard on, an absent shell mode `restricted`, an absent filesystem
// `full`, absent injection `host-boundary`, a limit of 0 "not set"), then each capability takes what both allow: modes the
// stricter, grants intersected, bans united, limits the minimum. The result is written out in full,
// so no default can re-widen it later.
import { fsMode, injectionMode, netMode, shellMode, limit, type Limits } from '../sandbox/spec-view.ts';
import type { SandboxSpec } from '../manifest/schema/index.ts';

type Caps = NonNullable<SandboxSpec['capabilities']>;
type Net = NonNullable<Caps['network']>;
type Fs = NonNullable<Caps['filesystem']>;
type Mount = NonNullable<Fs['mount_paths']>[number];

const LEVELS = ['none', 'process', 'wasm', 'container', 'vm'] as const; // weakest first
const NET = ['deny', 'allowlist', 'allow-all'] as const; // strictest first
const SHELL = ['deny', 'restricted', 'full'] as const;
const INJECTION = ['host-boundary', 'file-mount', 'environment'] as const;

const stricter = <T extends string>(order: readonly T[], a: T, b: T): T => (order.indexOf(a) <= order.indexOf(b) ? a : b);
const union = (a?: string[], b?: string[]) => [...new Set([...(a ?? []), ...(b ?? [])])];

/** Does host pattern `outer` allow everything `inner` allows? (`*.x.com` covers `a.x.com` and `*.a.x.com`.) */
function covers(outer: string, inner: string): boolean {
  const o = outer.toLowerCase().replace(/\.$/, '');
  const i = inner.toLowerCase().replace(/\.$/, '');
  if (o === i) return true;
  if (!o.startsWith('*.')) return false;
  const suffix = o.slice(1); // ".x.com"
  return i.endsWith(suffix) && i.length > suffix.length;
}

function narrowNetwork(a: SandboxSpec, b: SandboxSpec): Net {
  const ma = netMode(a);
  const mb = netMode(b);
  const mode = stricter(NET, ma, mb);
  const out: Net = { mode };
  if (mode === 'allowlist') {
    const la = ma === 'allowlist' ? (a.capabilities?.network?.allowed_hosts ?? []) : undefined;
    const lb = mb === 'allowlist' ? (b.capabilities?.network?.allowed_hosts ?? []) : undefined;
    // A host is in the intersection when each side has an entry covering it.
    if (la && lb) out.allowed_hosts = [...new Set([...la.filter((h) => lb.some((g) => covers(g, h))), ...lb.filter((h) => la.some((g) => covers(g, h)))])];
    else out.allowed_hosts = la ?? lb ?? [];
  }
  const sa = a.capabilities?.network?.ssrf_protection;
  const sb = b.capabilities?.network?.ssrf_protection;
  // Protection is on unless both sides turned it off explicitly (the guard's default is on). Left absent when
  // neither side declares it: absent reads as on, and a declared block is what an exec tool's level check
  // refuses without allow_downgrade.ssrf_protection (src/sandbox/levels.ts).
  if (sa || sb) out.ssrf_protection = {
    enabled: sa?.enabled !== false || sb?.enabled !== false,
    block_private_ips: sa?.block_private_ips !== false || sb?.block_private_ips !== false,
    dns_pinning: sa?.dns_pinning !== false || sb?.dns_pinning !== false,
  };
  return out;
}

const within = (path: string, dir: string) => path === dir || path.startsWith(dir.endsWith('/') ? dir : `${dir}/`);

/** What a scoped filesystem grants at `path`: the deepest mount covering it decides (as checkPath does). */
function grantAt(mounts: readonly Mount[], path: string): 'ro' | 'rw' | undefined {
  let best: Mount | undefined;
  for (const m of mounts) if (within(path, m.path) && (!best || m.path.length > best.path.length)) best = m;
  return best?.permissions;
}

/** A filesystem side as mounts: `full` and `read-only` cover `/`; `deny` covers nothing. */
function asMounts(s: SandboxSpec): Mount[] {
  switch (fsMode(s)) {
    case 'full':
      return [{ path: '/', permissions: 'rw' }];
    case 'read-only':
      return [{ path: '/', permissions: 'ro' }];
    case 'deny':
      return [];
    case 'scoped':
      return s.capabilities?.filesystem?.mount_paths ?? [];
  }
}

function narrowFs(a: SandboxSpec, b: SandboxSpec): Fs {
  const fa = fsMode(a);
  const fb = fsMode(b);
  const denied_paths = union(a.capabilities?.filesystem?.denied_paths, b.capabilities?.filesystem?.denied_paths);
  const withDenied = (fs: Fs): Fs => (denied_paths.length ? { ...fs, denied_paths } : fs);
  if (fa === 'deny' || fb === 'deny') return withDenied({ mode: 'deny' });
  if (fa === 'full') return withDenied({ ...b.capabilities?.filesystem, mode: fb });
  if (fb === 'full') return withDenied({ ...a.capabilities?.filesystem, mode: fa });
  if (fa === 'read-only' && fb === 'read-only') return withDenied({ mode: 'read-only' });
  // Otherwise at least one side is scoped: every mount path of either side is a candidate, granted
  // what BOTH sides grant there (each side's deepest covering mount decides), the stricter of the two.
  const ma = asMounts(a);
  const mb = asMounts(b);
  const mounts: Mount[] = [];
  for (const path of new Set([...ma, ...mb].map((m) => m.path))) {
    const ga = grantAt(ma, path);
    const gb = grantAt(mb, path);
    if (ga && gb) mounts.push({ path, permissions: ga === 'ro' || gb === 'ro' ? 'ro' : 'rw' });
  }
  return withDenied({ mode: 'scoped', mount_paths: mounts });
}

export function narrowSandbox(a: SandboxSpec, b: SandboxSpec): SandboxSpec {
  const level = LEVELS.indexOf(a.level) >= LEVELS.indexOf(b.level) ? a.level : b.level; // stronger isolation
  const ca = a.capabilities ?? {};
  const cb = b.capabilities ?? {};
  const capabilities: Caps = {
    network: narrowNetwork(a, b),
    filesystem: narrowFs(a, b),
    shell: {
      mode: stricter(SHELL, shellMode(a), shellMode(b)),
      blocked_commands: union(ca.shell?.blocked_commands, cb.shell?.blocked_commands),
      blocked_patterns: union(ca.shell?.blocked_patterns, cb.shell?.blocked_patterns),
    },
    secrets: { ...ca.secrets, ...cb.secrets, injection: stricter(INJECTION, injectionMode(a), injectionMode(b)) },
  };
  const limits: Record<string, number> = {};
  const keys = new Set([...Object.keys(a.resource_limits ?? {}), ...Object.keys(b.resource_limits ?? {})]) as Set<keyof Limits>;
  for (const k of keys) {
    // limit() reads 0 as "not set", so an override's 0 can never lift the tool's limit.
    const xs = [limit(a, k), limit(b, k)].filter((x): x is number => x !== undefined);
    if (xs.length) limits[k] = Math.min(...xs);
  }
  const out: SandboxSpec = { level, capabilities };
  const runtime = level === a.level ? (a.runtime ?? b.runtime) : (b.runtime ?? a.runtime);
  if (runtime) out.runtime = runtime;
  if (Object.keys(limits).length > 0) out.resource_limits = limits as SandboxSpec['resource_limits'];
  return out;
}
