// narrowSandbox(a, b) (src/gates/narrow-sandbox.ts, docs/tools.md "Overrides only narrow"): the
// intersection of two sandboxes. Property: the result never allows anything a alone (nor b alone)
// would not. "Allows" is judged by the code that enforces each capability: checkPath (filesystem),
// netPolicy/hostAllowed plus http-fetch's reading of an absent network block (network),
// checkShellCommand plus the shell builtin's reading of an absent mode (shell), spec-view (secrets,
// limits).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { netMode } from '../../src/sandbox/spec-view.ts';
import { narrowSandbox } from '../../src/gates/narrow-sandbox.ts';
import { checkPath } from '../../src/sandbox/paths.ts';
import { hostAllowed } from '../../src/net/host-allowlist.ts';
import { netPolicy } from '../../src/net/net-policy.ts';
import { checkShellCommand } from '../../src/sandbox/shell-rules.ts';
import { injectionMode, limit } from '../../src/sandbox/spec-view.ts';
import type { SandboxSpec } from '../../src/manifest/schema/index.ts';

type Caps = NonNullable<SandboxSpec['capabilities']>;
const sb = (capabilities?: Caps, extra: Partial<SandboxSpec> = {}): SandboxSpec => ({ level: 'process', ...(capabilities ? { capabilities } : {}), ...extra });

// ---- oracles: what a sandbox allows, read the way the enforcing code reads it ----
const ROOT = '/zz-claw-narrow';
const FS_PROBES: [string, 'read' | 'write'][] = [];
for (const p of ['', '/w', '/w/f', '/w/ro', '/w/ro/f', '/w/ro/x/f', '/w/sub/f', '/other/f', '/w/secret/f', '/etc-like/f']) {
  FS_PROBES.push([ROOT + p, 'read'], [ROOT + p, 'write']);
}
async function fsAllows(s: SandboxSpec, path: string, access: 'read' | 'write'): Promise<boolean> {
  return (await checkPath(path, access, s.capabilities?.filesystem, '/')).ok;
}
const HOSTS = ['api.x.com', 'x.com', 'a.x.com', 'b.a.x.com', 'evil.com', 'y.org', 'deep.y.org', '10.0.0.1'];
/** Every layer reads the network mode through spec-view's netMode (absent = allow-all); the guard applies the rest. */
function netAllows(s: SandboxSpec, host: string): boolean {
  const mode = netMode(s);
  if (mode === 'deny') return false;
  const p = netPolicy({ ...s.capabilities?.network, mode });
  return p.mode === 'allow-all' || hostAllowed(host, p.allowedHosts);
}
/** May a request reach a private address (SSRF protection off or block_private_ips off)? */
function privateAllowed(s: SandboxSpec): boolean {
  const p = netPolicy({ ...s.capabilities?.network, mode: netMode(s) });
  return !p.ssrf || !p.blockPrivate;
}
const COMMANDS = ['ls -la', 'rm -rf /', 'curl http://e | bash', 'chmod 777 x', 'echo password=1', 'eval x'];
function cmdAllows(s: SandboxSpec, cmd: string): boolean {
  return checkShellCommand(cmd, s.capabilities?.shell) === undefined && s.capabilities?.shell?.mode !== 'deny';
}
/** The shell builtin runs a command string only under shell.mode full (absent mode = restricted). */
const commandStringAllowed = (s: SandboxSpec) => (s.capabilities?.shell?.mode ?? 'restricted') === 'full';
const INJ = ['host-boundary', 'file-mount', 'environment'];
const LIMITS = ['memory_mb', 'cpu_shares', 'max_processes', 'max_open_files', 'timeout_ms', 'max_output_bytes'] as const;
const LEVEL_ORDER = ['none', 'process', 'wasm', 'container', 'vm'];

/** Everything `n` allows that `a` does not (empty when the property holds). */
async function widening(n: SandboxSpec, a: SandboxSpec): Promise<string[]> {
  const out: string[] = [];
  if (LEVEL_ORDER.indexOf(n.level) < LEVEL_ORDER.indexOf(a.level)) out.push(`level ${n.level} weaker than ${a.level}`);
  for (const [p, acc] of FS_PROBES) if ((await fsAllows(n, p, acc)) && !(await fsAllows(a, p, acc))) out.push(`fs ${acc} ${p}`);
  for (const h of HOSTS) if (netAllows(n, h) && !netAllows(a, h)) out.push(`net ${h}`);
  if (privateAllowed(n) && !privateAllowed(a)) out.push('ssrf: private addresses');
  for (const c of COMMANDS) if (cmdAllows(n, c) && !cmdAllows(a, c)) out.push(`shell ${c}`);
  if (commandStringAllowed(n) && !commandStringAllowed(a)) out.push('shell: command strings');
  if (INJ.indexOf(injectionMode(n)) > INJ.indexOf(injectionMode(a))) out.push(`secrets.injection ${injectionMode(n)} wider than ${injectionMode(a)}`);
  for (const k of LIMITS) {
    const la = limit(a, k);
    const ln = limit(n, k);
    if (la !== undefined && (ln === undefined || ln > la)) out.push(`limit ${k}: ${ln} vs ${la}`);
  }
  return out;
}

async function assertNarrows(a: SandboxSpec, b: SandboxSpec, label: string) {
  for (const [x, y, dir] of [[a, b, 'a,b'], [b, a, 'b,a']] as const) {
    const n = narrowSandbox(x, y);
    assert.equal(await widening(n, x), [], `${label} (${dir}) vs first`);
    assert.equal(await widening(n, y), [], `${label} (${dir}) vs second`);
  }
}

const W = `${ROOT}/w`;

test('level: the stronger isolation wins, in both orders', () => {
  const table: [SandboxSpec['level'], SandboxSpec['level'], SandboxSpec['level']][] = [
    ['none', 'process', 'process'],
    ['process', 'none', 'process'],
    ['process', 'container', 'container'],
    ['vm', 'wasm', 'vm'],
    ['none', 'none', 'none'],
  ];
  for (const [a, b, want] of table) assert.is(narrowSandbox({ level: a }, { level: b }).level, want, `${a} ∩ ${b}`);
});

// Pairs for which the property holds (checked in both orders, against both sides). Every side
// states every capability (absent blocks are read differently by different enforcers: see the
// BUG tests below), starting from FULL and overriding one area.
const FULL_CAPS: Caps = {
  network: { mode: 'allow-all' },
  filesystem: { mode: 'full' },
  shell: { mode: 'full' },
  secrets: { injection: 'environment' },
};
const FULL: SandboxSpec = sb(FULL_CAPS);
const x = (caps: Caps, extra: Partial<SandboxSpec> = {}): SandboxSpec => sb({ ...FULL_CAPS, ...caps }, extra);
const PAIRS: [string, SandboxSpec, SandboxSpec][] = [
  ['level only', { level: 'none' }, { level: 'vm' }],
  ['allow-all vs allowlist', FULL, x({ network: { mode: 'allowlist', allowed_hosts: ['api.x.com'] } })],
  ['allowlists with wildcards', x({ network: { mode: 'allowlist', allowed_hosts: ['*.x.com', 'y.org'] } }), x({ network: { mode: 'allowlist', allowed_hosts: ['a.x.com', '*.y.org', 'evil.com'] } })],
  ['wildcard vs deeper wildcard', x({ network: { mode: 'allowlist', allowed_hosts: ['*.x.com'] } }), x({ network: { mode: 'allowlist', allowed_hosts: ['*.a.x.com', 'x.com'] } })],
  ['deny vs allowlist', x({ network: { mode: 'deny' } }), x({ network: { mode: 'allowlist', allowed_hosts: ['x.com'] } })],
  ['ssrf off vs on', x({ network: { mode: 'allow-all', ssrf_protection: { enabled: false } } }), x({ network: { mode: 'allow-all', ssrf_protection: { block_private_ips: true } } })],
  ['ssrf off vs absent', x({ network: { mode: 'allow-all', ssrf_protection: { enabled: false, block_private_ips: false } } }), FULL],
  ['full vs scoped', FULL, x({ filesystem: { mode: 'scoped', mount_paths: [{ path: W, permissions: 'rw' }] } })],
  ['nested mounts ro/rw', x({ filesystem: { mode: 'scoped', mount_paths: [{ path: W, permissions: 'rw' }, { path: `${W}/ro`, permissions: 'ro' }] } }), x({ filesystem: { mode: 'scoped', mount_paths: [{ path: W, permissions: 'rw' }] } })],
  ['disjoint mounts', x({ filesystem: { mode: 'scoped', mount_paths: [{ path: W, permissions: 'rw' }] } }), x({ filesystem: { mode: 'scoped', mount_paths: [{ path: `${ROOT}/other`, permissions: 'rw' }] } })],
  ['denied paths', x({ filesystem: { mode: 'full', denied_paths: [`${W}/secret`] } }), x({ filesystem: { mode: 'scoped', mount_paths: [{ path: W, permissions: 'rw' }], denied_paths: [`${ROOT}/etc-like`] } })],
  ['fs deny vs full', x({ filesystem: { mode: 'deny' } }), FULL],
  ['read-only vs full', x({ filesystem: { mode: 'read-only' } }), FULL],
  ['shell lists', x({ shell: { mode: 'full', blocked_commands: ['rm -rf /'] } }), x({ shell: { mode: 'restricted', blocked_commands: ['chmod 777'], blocked_patterns: ['eval\\s+', '\\|\\s*bash'] } })],
  ['shell deny', x({ shell: { mode: 'deny' } }), FULL],
  ['secrets', x({ secrets: { injection: 'host-boundary' } }), x({ secrets: { injection: 'file-mount' } })],
  ['limits', x({}, { resource_limits: { timeout_ms: 5000, memory_mb: 64 } }), x({}, { resource_limits: { timeout_ms: 1000, max_output_bytes: 10 } })],
  ['limits vs none', x({}, { resource_limits: { timeout_ms: 5000 } }), FULL],
];

test('property: narrowSandbox(a, b) allows nothing a or b alone would not (table, both orders)', async () => {
  for (const [label, a, b] of PAIRS) await assertNarrows(a, b, label);
});

test('narrowing is idempotent and absorbs the wider side', () => {
  for (const [, a, b] of PAIRS) {
    const n = narrowSandbox(a, b);
    assert.equal(narrowSandbox(n, n), n);
  }
});

// ---- bugs: each pair below widens one side (see the report) ----

test('scoped ∩ read-only must stay within the mounts (read-only reads anywhere)', async () => {
  const scoped = sb({ filesystem: { mode: 'scoped', mount_paths: [{ path: W, permissions: 'rw' }] } });
  const ro = sb({ filesystem: { mode: 'read-only' } });
  const n = narrowSandbox(scoped, ro);
  assert.is(await fsAllows(n, `${ROOT}/other/f`, 'read'), false, 'reading outside the scoped mounts');
  assert.is(await fsAllows(n, `${W}/f`, 'write'), false);
  assert.is(await fsAllows(n, `${W}/f`, 'read'), true);
});

test('one path mounted twice with rw and ro: the intersection must not write where a is ro', async () => {
  const a = sb({ filesystem: { mode: 'scoped', mount_paths: [{ path: W, permissions: 'rw' }, { path: `${W}/ro`, permissions: 'ro' }] } });
  const b = sb({ filesystem: { mode: 'scoped', mount_paths: [{ path: `${W}/ro/x`, permissions: 'rw' }] } });
  assert.is(await fsAllows(a, `${W}/ro/x/f`, 'write'), false);
  const n = narrowSandbox(a, b);
  assert.is(await fsAllows(n, `${W}/ro/x/f`, 'write'), false, JSON.stringify(n.capabilities!.filesystem));
});

test('absent network mode (allow-all, spec-view netMode) ∩ deny is deny; ∩ allowlist is that allowlist', async () => {
  const a = sb();
  assert.is(netAllows(a, 'evil.com'), true);
  const d = narrowSandbox(a, sb({ network: { mode: 'deny' } }));
  assert.is(netAllows(d, 'evil.com'), false);
  const l = narrowSandbox(a, sb({ network: { mode: 'allowlist', allowed_hosts: ['api.x.com'] } }));
  assert.is(netAllows(l, 'api.x.com'), true);
  assert.is(netAllows(l, 'evil.com'), false);
  assert.equal(await widening(narrowSandbox(a, sb({ network: { mode: 'allow-all' } })), a), []);
});

test('absent shell mode (shell builtin: restricted) ∩ full must not allow command strings', async () => {
  for (const a of [sb(), sb({ shell: { blocked_commands: ['rm -rf /'] } })]) {
    assert.is(commandStringAllowed(a), false);
    assert.equal(await widening(narrowSandbox(a, sb({ shell: { mode: 'full' } })), a), []);
  }
});

test('absent secrets.injection (host-boundary) ∩ environment must stay host-boundary', () => {
  const n = narrowSandbox(sb(), sb({ secrets: { injection: 'environment' } }));
  assert.is(injectionMode(n), 'host-boundary');
  const n2 = narrowSandbox(sb({ secrets: { encryption: 'aes-256-gcm' } }), sb({ secrets: { injection: 'environment' } }));
  assert.is(injectionMode(n2), 'host-boundary');
});

test('a limit of 0 ("not set") in the override must not lift the tool limit', () => {
  const n = narrowSandbox(sb(undefined, { resource_limits: { timeout_ms: 1000, max_output_bytes: 100 } }), sb(undefined, { resource_limits: { timeout_ms: 0, max_output_bytes: 0 } }));
  assert.is(limit(n, 'timeout_ms'), 1000);
  assert.is(limit(n, 'max_output_bytes'), 100);
});

test.run();
