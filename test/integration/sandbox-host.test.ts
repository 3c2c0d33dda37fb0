import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import type { SandboxSpec } from '../../src/manifest/schema/index.ts';
import { bwrapArgs } from '../../src/sandbox/bwrap-args.ts';
import { detectHost, probeHost } from '../../src/sandbox/host.ts';
import { planIsolation } from '../../src/sandbox/levels.ts';
import { doctorReport } from '../../src/sandbox/doctor.ts';
import { fakeHost } from '../fixtures/sandbox/helpers.ts';

test('detectHost is cached per process; probeHost answers afresh', async () => {
  const a = detectHost();
  assert.is(detectHost(), a);
  const h = await a;
  assert.is(h.platform, process.platform);
  assert.is(h.root, process.getuid?.() === 0);
  assert.ok(h.cpus >= 1);
  const fresh = await probeHost();
  assert.is(fresh.bwrap.works, h.bwrap.works);
});

test('the bubblewrap answer is honest: it matches running bubblewrap directly', async () => {
  const h = await detectHost();
  const direct = spawnSync('bwrap', ['--unshare-all', '--die-with-parent', '--ro-bind', '/', '/', 'true']);
  assert.is(h.bwrap.works, direct.status === 0);
  if (!h.bwrap.works) assert.ok(h.bwrap.error, 'a reason is given');
  assert.ok(doctorReport(h).includes(h.bwrap.works ? '[x] bubblewrap' : '[ ] bubblewrap'));
});

test('the cgroup answer is honest: a reported base accepts a child group with pids.max', async () => {
  const h = await detectHost();
  if (!h.cgroup.support) {
    assert.ok(h.cgroup.notes.length > 0, 'a reason is given');
    return;
  }
  const dir = join(h.cgroup.support.base, `test-${process.pid}`);
  execFileSync('mkdir', ['-p', dir]);
  try {
    execFileSync('sh', ['-c', `echo 7 > ${dir}/pids.max`]);
  } finally {
    execFileSync('rmdir', [dir]);
  }
});

/** Every flag we generate must exist in this bubblewrap's --help (bubblewrap 0.8 here and in CI). */
test('generated bubblewrap flags exist in `bwrap --help` and match the spec per mode', async () => {
  const specs: SandboxSpec[] = [
    { level: 'process', capabilities: { network: { mode: 'deny' }, filesystem: { mode: 'deny', denied_paths: ['/etc/hostname', '/root'] } } },
    { level: 'process', capabilities: { filesystem: { mode: 'read-only' } } },
    { level: 'process', capabilities: { filesystem: { mode: 'scoped', mount_paths: [{ path: '/tmp', permissions: 'rw' }, { path: '/usr/share', permissions: 'ro' }] } } },
    { level: 'process', capabilities: { filesystem: { mode: 'full' } }, resource_limits: { max_processes: 5 } },
  ];
  const host = fakeHost({ bwrap: true, userns: true, root: false });
  const all: string[][] = [];
  for (const spec of specs) {
    const p = planIsolation(spec, host);
    assert.ok(p.ok);
    if (!p.ok) continue;
    all.push(await bwrapArgs({ spec, plan: p.plan, root: true, workdir: '/tmp/claw-run-x', cwd: '/tmp/claw-run-x', readOnly: [], maskCgroupFs: true }));
  }
  const [deny, ro, scoped, full] = all;
  const has = (a: string[], ...seq: string[]) => a.some((_, i) => seq.every((s, j) => a[i + j] === s));
  for (const a of all) assert.ok(has(a, '--die-with-parent') && has(a, '--unshare-pid') && has(a, '--cap-drop', 'ALL') && has(a, '--proc', '/proc'));
  assert.ok(has(deny, '--unshare-net'));
  assert.ok(has(deny, '--ro-bind', '/usr', '/usr'));
  assert.not.ok(deny.includes('/etc'), 'deny: no /etc');
  assert.ok(has(deny, '--ro-bind', '/dev/null', '/etc/hostname'));
  assert.ok(has(deny, '--tmpfs', '/root', '--remount-ro', '/root'));
  assert.ok(has(ro, '--ro-bind', '/', '/') && has(ro, '--tmpfs', '/tmp/claw-run-x'));
  assert.not.ok(ro.includes('--unshare-net'));
  assert.ok(has(scoped, '--bind', '/tmp', '/tmp') && has(scoped, '--ro-bind', '/usr/share', '/usr/share'));
  assert.not.ok(has(scoped, '--ro-bind', '/etc', '/etc'), 'scoped: never all of /etc');
  assert.ok(has(scoped, '--ro-bind', '/etc/ld.so.cache', '/etc/ld.so.cache'), 'scoped: the loader cache');
  assert.not.ok(scoped.some((x) => x.startsWith('/etc/shadow') || x.startsWith('/etc/ssl/private')), 'scoped: no shadow, no private keys');
  assert.ok(has(full, '--bind', '/', '/') && has(full, '--unshare-user'));

  const h = await detectHost();
  if (!h.bwrap.path) return;
  const help = spawnSync(h.bwrap.path, ['--help'], { encoding: 'utf8' }).stdout;
  const known = new Set(help.match(/--[a-z0-9-]+/g) ?? []);
  for (const flag of new Set(all.flat().filter((x) => x.startsWith('--')))) assert.ok(known.has(flag), `bwrap --help lists ${flag}`);
});

test('max_processes as an unprivileged user: RLIMIT_NPROC in a bubblewrap user namespace bounds a fork bomb', async () => {
  const h = await detectHost();
  if (!h.root || !h.bwrap.works) return; // as non-root this is the path runSandboxed takes anyway (sandbox-runner)
  const dir = mkdtempSync(join(tmpdir(), 'claw-nproc-'));
  chmodSync(dir, 0o755);
  try {
    const out = join(dir, 'probe.mjs');
    await build({ entryPoints: [join(process.cwd(), 'test/fixtures/sandbox/nproc-as-user.ts')], bundle: true, platform: 'node', format: 'esm', outfile: out, logLevel: 'error' });
    chmodSync(out, 0o644);
    const r = spawnSync(process.execPath, [out], { uid: 65534, gid: 65534, cwd: dir, encoding: 'utf8', env: { PATH: '/usr/bin:/bin', HOME: dir }, timeout: 20000 });
    assert.is(r.status, 0, r.stderr);
    const res = JSON.parse(r.stdout.trim().split('\n').pop()!);
    if (res.refused) {
      // This kernel/bubblewrap refuses unprivileged user namespaces: then the refusal is the answer.
      assert.match(res.refused, /max_processes needs/);
      return;
    }
    if (process.env.CLAW_TEST_VERBOSE) console.log('  as uid 65534:', JSON.stringify(res));
    assert.is(res.uid, 65534);
    assert.match(res.notes.join('\n'), /RLIMIT_NPROC inside a bubblewrap user namespace/);
    assert.ok(res.peak > 1 && res.peak <= 22, `contained: ${res.peak}`);
    assert.ok(res.timedOut);
    assert.equal(res.survivors, []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
