import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { SandboxSpec } from '../../src/manifest/schema/index.ts';
import { checkLevel, planIsolation, validateDowngrades } from '../../src/sandbox/levels.ts';
import { unprotected } from '../../src/sandbox/unprotected.ts';
import { workerProcessSandbox } from '../../src/tools/builtins/impl.ts';
import { narrowSandbox } from '../../src/gates/narrow-sandbox.ts';
import { effectiveTimeout } from '../../src/sandbox/spec-view.ts';
import { doctorJson, doctorReport } from '../../src/sandbox/doctor.ts';
import { fakeHost } from '../fixtures/sandbox/helpers.ts';
import * as v from 'valibot';
import { sandboxRuntimeConfigSchema } from '../../src/sandbox/config.ts';

const full = fakeHost({ bwrap: true, cgroup: true });
const bare = fakeHost({});

test('none and process are provided', () => {
  assert.equal(checkLevel({ level: 'none' }, bare), { ok: true, level: 'none', notes: [] });
  const none = planIsolation({ level: 'none' }, bare);
  if (none.ok) assert.match(unprotected(none.plan, { level: 'none' }, bare), /^level none does not protect: .*every file the runtime can/);
  const r = checkLevel({ level: 'process' }, full);
  assert.ok(r.ok);
  if (r.ok) assert.is(r.level, 'process');
});

test('wasm, container, vm are refused with a message naming the level and what the board lacks', () => {
  for (const [level, lack] of [
    ['wasm', /WebAssembly/],
    ['container', /container runtime/],
    ['vm', /virtual-machine/],
  ] as const) {
    const r = checkLevel({ level }, full);
    assert.not.ok(r.ok, level);
    if (!r.ok) {
      assert.match(r.message, new RegExp(`sandbox level "${level}" is not available`));
      assert.match(r.message, lack);
      assert.match(r.message, /arm64, Linux 6\.1\.0-test/);
      assert.match(r.message, new RegExp(`allow_downgrade: \\{ ${level}: process \\}`));
    }
  }
});

test('a named downgrade is honoured and comes back as a note; another key does not count', () => {
  const r = checkLevel({ level: 'container' }, full, { container: 'process' });
  assert.ok(r.ok);
  if (r.ok) {
    assert.is(r.level, 'process');
    assert.match(r.notes.join('\n'), /"container" downgraded to "process" \(allow_downgrade\.container\)/);
  }
  assert.not.ok(checkLevel({ level: 'container' }, full, { vm: 'process' }).ok);
  assert.not.ok(checkLevel({ level: 'container' }, full, { container: 'wasm' }).ok);
});

test('features that need bubblewrap are refused without it, unless { bubblewrap: none }', () => {
  const host = fakeHost({ cgroup: true });
  const specs: [SandboxSpec, RegExp][] = [
    [{ level: 'process', capabilities: { network: { mode: 'deny' } } }, /network deny/],
    [{ level: 'process', capabilities: { filesystem: { mode: 'scoped', mount_paths: [{ path: '/w', permissions: 'rw' }] } } }, /filesystem scoped/],
    [{ level: 'process', capabilities: { filesystem: { mode: 'read-only' } } }, /filesystem read-only/],
    [{ level: 'process', capabilities: { filesystem: { mode: 'full', denied_paths: ['/etc/shadow'] } } }, /denied_paths/],
  ];
  for (const [spec, what] of specs) {
    const r = checkLevel(spec, host);
    assert.not.ok(r.ok);
    if (!r.ok) {
      assert.match(r.message, what);
      assert.match(r.message, /bubblewrap/);
      assert.match(r.message, /allow_downgrade: \{ bubblewrap: none \}/);
    }
    const d = checkLevel(spec, host, { bubblewrap: 'none' });
    assert.ok(d.ok);
    if (d.ok) assert.match(d.notes.join('\n'), /NOT enforced/);
    assert.ok(checkLevel(spec, full).ok, 'fine with bubblewrap');
  }
});

test('setsid protection: bubblewrap or a cgroup; neither → refused; level none does not ask for it', () => {
  const none = fakeHost({});
  const r = checkLevel({ level: 'process' }, none);
  assert.not.ok(r.ok);
  if (!r.ok) assert.match(r.message, /setsid/);
  const cg = checkLevel({ level: 'process' }, fakeHost({ cgroup: true }));
  assert.ok(cg.ok);
  if (cg.ok) assert.match(cg.notes.join('\n'), /cgroup sweep/);
  assert.ok(checkLevel({ level: 'none' }, none).ok);
});

test('in-process builtins need no process mechanism', () => {
  const spec: SandboxSpec = { level: 'process', capabilities: { network: { mode: 'deny' }, filesystem: { mode: 'scoped' } }, resource_limits: { max_processes: 5 } };
  assert.ok(checkLevel(spec, bare, {}, 'builtin').ok);
  assert.not.ok(checkLevel({ level: 'vm' }, bare, {}, 'builtin').ok);
});

test('network allowlist cannot be held by a child process: refused unless downgraded to deny or allow-all', () => {
  const spec: SandboxSpec = { level: 'process', capabilities: { network: { mode: 'allowlist', allowed_hosts: ['api.x.com'] } } };
  const r = checkLevel(spec, full);
  assert.not.ok(r.ok);
  if (!r.ok) assert.match(r.message, /network-allowlist/);
  const d = planIsolation(spec, full, { 'network-allowlist': 'deny' });
  assert.ok(d.ok && d.plan.network === 'deny');
  const a = planIsolation(spec, full, { 'network-allowlist': 'allow-all' });
  assert.ok(a.ok && a.plan.network === 'allow-all');
});

test('max_processes: cgroup first; non-root bubblewrap user namespace second; else refused', () => {
  const spec: SandboxSpec = { level: 'process', resource_limits: { max_processes: 20 } };
  const c = planIsolation(spec, full);
  assert.ok(c.ok && c.plan.pids?.by === 'cgroup' && c.plan.pids.max === 22 && c.plan.cgroup);
  const u = planIsolation(spec, fakeHost({ bwrap: true, userns: true, root: false }));
  assert.ok(u.ok && u.plan.pids?.by === 'userns-nproc' && u.plan.pids.max === 21 && u.plan.prlimit);
  const root = checkLevel(spec, fakeHost({ bwrap: true, userns: true, root: true }));
  assert.not.ok(root.ok);
  if (!root.ok) assert.match(root.message, /RLIMIT_NPROC does not apply to root/);
  const d = checkLevel(spec, fakeHost({ bwrap: true }), { max_processes: 'none' });
  assert.ok(d.ok);
  if (d.ok) assert.match(d.notes.join('\n'), /max_processes 20: NOT enforced/);
});

test('memory_mb and max_open_files need prlimit (memory can also be a v2 cgroup)', () => {
  const spec: SandboxSpec = { level: 'process', resource_limits: { memory_mb: 64, max_open_files: 32 } };
  const noPr = fakeHost({ bwrap: true, prlimit: false });
  const r = checkLevel(spec, noPr);
  assert.not.ok(r.ok);
  if (!r.ok) assert.match(r.message, /max_open_files and memory_mb need prlimit/);
  assert.ok(checkLevel(spec, noPr, { prlimit: 'none' }).ok);
  const mem = planIsolation({ level: 'process', resource_limits: { memory_mb: 64 } }, fakeHost({ bwrap: true, cgroup: true, memory: true, prlimit: false }));
  assert.ok(mem.ok && mem.plan.memory?.cgroup === 64 * 1024 * 1024 && mem.plan.memory.rlimit === undefined);
  const p = planIsolation(spec, full, {}, 'exec', 5000);
  assert.ok(p.ok);
  if (p.ok) {
    assert.is(p.plan.memory?.rlimit, 64 * 1024 * 1024);
    assert.is(p.plan.nofile, 32);
    assert.is(p.plan.cpuSeconds, 5 * 4 + 1, 'timeout × cores + 1: never before the wall-clock timer');
  }
});

test('cpu_shares: cpu.weight with a v2 cpu controller, otherwise a note (it is a weight, not a bound)', () => {
  const spec: SandboxSpec = { level: 'process', resource_limits: { cpu_shares: 512 } };
  const w = planIsolation(spec, fakeHost({ bwrap: true, cgroup: true, memory: true }));
  assert.ok(w.ok && w.plan.cpuWeight === 50);
  const n = checkLevel(spec, full);
  assert.ok(n.ok);
  if (n.ok) assert.match(n.notes.join('\n'), /cpu_shares 512: not enforced/);
});

test('timeout: the smaller of tool timeout_ms and resource_limits.timeout_ms; 0 means unset', () => {
  assert.is(effectiveTimeout({ level: 'process', resource_limits: { timeout_ms: 500 } }, 1000), 500);
  assert.is(effectiveTimeout({ level: 'process', resource_limits: { timeout_ms: 5000 } }, 1000), 1000);
  assert.is(effectiveTimeout({ level: 'process' }, 1000), 1000);
  assert.is(effectiveTimeout({ level: 'process', resource_limits: { timeout_ms: 700 } }), 700);
  assert.is(effectiveTimeout({ level: 'process', resource_limits: { timeout_ms: 0 } }), undefined);
});

test('validateDowngrades reports unknown keys and values', () => {
  assert.equal(validateDowngrades({ container: 'process', bubblewrap: 'none' }), []);
  const issues = validateDowngrades({ docker: 'process', vm: 'container' });
  assert.is(issues.length, 2);
  assert.match(issues[0], /unknown key "docker"/);
  assert.match(issues[1], /allow_downgrade\.vm: "container" is not one of process, none/);
});

test('doctor: layers, what each enables, and the downgrade key when missing', () => {
  const j = doctorJson(fakeHost({ bwrap: false, cgroup: true }));
  assert.equal(j.levels.provided, ['none', 'process']);
  const bw = j.layers.find((l) => l.name === 'bubblewrap')!;
  assert.is(bw.available, false);
  assert.ok(bw.enables.some((e) => e.includes('--unshare-net')));
  assert.ok(j.layers.find((l) => l.name === 'cgroup pids')!.available);
  const text = doctorReport(fakeHost({ bwrap: false, cgroup: true }));
  assert.match(text, /\[ \] bubblewrap: bwrap not found/);
  assert.match(text, /allow_downgrade: \{ bubblewrap: \.\.\. \}/);
  assert.match(text, /\[x\] cgroup pids/);
});

test('runtime configuration section: allow_downgrade validated, kill_grace_ms bounded', () => {
  assert.ok(v.safeParse(sandboxRuntimeConfigSchema, { allow_downgrade: { container: 'process' }, kill_grace_ms: 500 }).success);
  const bad = v.safeParse(sandboxRuntimeConfigSchema, { allow_downgrade: { container: 'docker' } });
  assert.not.ok(bad.success);
  if (!bad.success) assert.match(bad.issues[0].message, /allow_downgrade\.container: "docker" is not one of process, none/);
  assert.not.ok(v.safeParse(sandboxRuntimeConfigSchema, { kill_grace_ms: -1 }).success);
  assert.not.ok(v.safeParse(sandboxRuntimeConfigSchema, { other: 1 }).success);
});

test('ssrf_protection declared on an exec tool with network allow-all: refused unless { ssrf_protection: none }, then a note', () => {
  const spec: SandboxSpec = { level: 'process', capabilities: { network: { mode: 'allow-all', ssrf_protection: { enabled: true } } } };
  const r = checkLevel(spec, full);
  assert.not.ok(r.ok);
  if (!r.ok) assert.match(r.message, /allow_downgrade: \{ ssrf_protection: none \}/);
  const named = checkLevel(spec, full, { ssrf_protection: 'none' });
  assert.ok(named.ok);
  if (named.ok) assert.match(named.notes.join('\n'), /ssrf_protection NOT enforced/);
  // In-process builtins enforce it themselves; a disabled guard or a network deny needs nothing.
  assert.ok(checkLevel(spec, full, {}, 'builtin').ok);
  assert.ok(checkLevel({ level: 'process', capabilities: { network: { mode: 'allow-all', ssrf_protection: { enabled: false } } } }, full).ok);
  assert.ok(checkLevel({ level: 'process', capabilities: { network: { mode: 'deny', ssrf_protection: { enabled: true } } } }, full).ok);
  // An allowlist run as allow-all loses the guard too: both downgrades must be named.
  const list: SandboxSpec = { level: 'process', capabilities: { network: { mode: 'allowlist', allowed_hosts: ['a.example'], ssrf_protection: { enabled: true } } } };
  assert.not.ok(checkLevel(list, full, { 'network-allowlist': 'allow-all' }).ok);
  assert.ok(checkLevel(list, full, { 'network-allowlist': 'allow-all', ssrf_protection: 'none' }).ok);
  assert.ok(checkLevel(list, full, { 'network-allowlist': 'deny' }).ok);
  assert.equal(validateDowngrades({ ssrf_protection: 'none' }), []);
  // Narrowing two sandboxes that say nothing about SSRF does not invent a block to refuse.
  const plain: SandboxSpec = { level: 'process', capabilities: { network: { mode: 'allow-all' } } };
  assert.ok(checkLevel(narrowSandbox(plain, { level: 'process' }), full).ok);
  assert.not.ok(checkLevel(narrowSandbox(plain, spec), full).ok, 'a narrowing that asks for the guard is refused like a declaration');
  // A builtin's worker applies the guard itself: its process layer has nothing to refuse.
  assert.ok(checkLevel(workerProcessSandbox(spec), full).ok);
  assert.ok(checkLevel(workerProcessSandbox(list), full).ok);
});

test('a scoped mount_path inside the runtime\'s own directories is refused; data_dir/workspace is shared', () => {
  const host = { ...full, private: { dirs: ['/etc/claw/secrets', '/srv/agent/data'], files: ['/srv/agent/claw.runtime.yaml'], shared: ['/srv/agent/data/workspace'] } };
  const scoped = (path: string): SandboxSpec => ({ level: 'process', capabilities: { filesystem: { mode: 'scoped', mount_paths: [{ path, permissions: 'rw' }] } } });
  for (const p of ['/etc/claw/secrets', '/etc/claw/secrets/x', '/srv/agent/data', '/srv/agent/data/memory']) {
    const r = checkLevel(scoped(p), host);
    assert.not.ok(r.ok, p);
    if (!r.ok) assert.match(r.message, /a directory of the runtime itself/);
  }
  assert.not.ok(checkLevel(scoped('/srv/agent/claw.runtime.yaml'), host).ok);
  for (const p of ['/srv/agent/data/workspace', '/srv/agent/data/workspace/notes', '/srv/agent', '/etc/claw']) assert.ok(checkLevel(scoped(p), host).ok, p);
  const plan = planIsolation(scoped('/srv/agent'), host);
  assert.ok(plan.ok && plan.plan.hide === host.private, 'the plan carries what bubblewrap must hide');
});

test('doctor: what each provided level does not protect, and the environ check', () => {
  const j = doctorJson({ ...fakeHost({ bwrap: true, cgroup: true }), environ: { exposed: ['OPENAI_API_KEY'], readable: true } });
  assert.equal(j.unprotected.map((u) => u.level), ['none', 'process']);
  assert.match(j.unprotected[0].text, /level none does not protect: .*secrets directory/);
  assert.match(j.unprotected[1].text, /level process \+ bubblewrap does not protect: .*shared kernel/);
  assert.equal(j.environExposed, ['OPENAI_API_KEY']);
  assert.match(doctorReport({ ...fakeHost({}), environ: { exposed: [], readable: true } }), /secrets wiped from \/proc\/<pid>\/environ/);
});

test.run();
