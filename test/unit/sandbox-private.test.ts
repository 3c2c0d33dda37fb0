// bubblewrap arguments that hide the runtime's own files (secrets dir, data_dir, claw.runtime.yaml) wherever a
// bind would show them, and the /etc a scoped sandbox gets; on real temp dirs, since binds are decided on real paths.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { closeSync, mkdirSync, mkdtempSync, readlinkSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxSpec } from '../../src/manifest/schema/index.ts';
import { bwrapArgs, ETC_NETWORK, PROC_READ_ONLY } from '../../src/sandbox/bwrap-args.ts';
import { movableAncestor, planIsolation } from '../../src/sandbox/levels.ts';
import { fakeHost } from '../fixtures/sandbox/helpers.ts';

const has = (a: string[], ...seq: string[]) => a.some((_, i) => seq.every((s, j) => a[i + j] === s));

function fixture() {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'claw-private-')));
  mkdirSync(join(root, 'secrets'));
  mkdirSync(join(root, 'data/workspace'), { recursive: true });
  writeFileSync(join(root, 'claw.runtime.yaml'), 'data_dir: ./data\n');
  const priv = { dirs: [join(root, 'secrets'), join(root, 'data')], files: [join(root, 'claw.runtime.yaml')], shared: [join(root, 'data/workspace')] };
  return { root, priv, host: { ...fakeHost({ bwrap: true, cgroup: true }), private: priv } };
}

async function args(spec: SandboxSpec, host: ReturnType<typeof fixture>['host']): Promise<string[]> {
  const p = planIsolation(spec, host);
  if (!p.ok) throw new Error(p.message);
  return bwrapArgs({ spec, plan: p.plan, root: true, workdir: '/tmp/claw-run-x', cwd: '/tmp/claw-run-x', readOnly: [], maskCgroupFs: false });
}

test('full and read-only: the secrets dir and data_dir become empty read-only tmpfs, the workspace is shown again, the config is /dev/null', async () => {
  const { root, host } = fixture();
  try {
    for (const mode of ['full', 'read-only'] as const) {
      const a = await args({ level: 'process', capabilities: { filesystem: { mode } } }, host);
      const at = (...x: string[]) => a.findIndex((_, i) => x.every((s, j) => a[i + j] === s));
      assert.ok(has(a, '--tmpfs', `${root}/secrets`), mode);
      assert.ok(has(a, '--tmpfs', `${root}/data`, mode === 'full' ? '--bind' : '--ro-bind', `${root}/data/workspace`, `${root}/data/workspace`), mode);
      assert.ok(has(a, '--ro-bind', '/dev/null', `${root}/claw.runtime.yaml`), mode);
      // Read-only once everything inside is mounted (a run dir or denied path inside data_dir): after the work dir, before --chdir.
      for (const d of [`${root}/secrets`, `${root}/data`]) {
        assert.ok(at('--remount-ro', d) > at('--tmpfs', '/tmp/claw-run-x') || mode === 'full', `${mode}: ${d} made read-only after the work dir`);
        assert.ok(at('--remount-ro', d) > at('--tmpfs', d) && at('--remount-ro', d) < at('--chdir'), `${mode}: ${d} made read-only last`);
      }
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('scoped: a mount reached through a symlink is masked where the sandbox sees it; a mount inside a private dir throws', async () => {
  const { root, host } = fixture();
  try {
    symlinkSync(root, `${root}-link`);
    const a = await args({ level: 'process', capabilities: { network: { mode: 'deny' }, filesystem: { mode: 'scoped', mount_paths: [{ path: `${root}-link`, permissions: 'ro' }] } } }, host);
    assert.ok(has(a, '--ro-bind', root, `${root}-link`));
    assert.ok(has(a, '--tmpfs', `${root}-link/secrets`));
    assert.ok(has(a, '--ro-bind', '/dev/null', `${root}-link/claw.runtime.yaml`));
    assert.not.ok(a.some((x) => ETC_NETWORK.some((n) => x === `/etc/${n}`)), 'no DNS or CA files under network deny');
    // A link that leads inside the secrets dir passes the lexical check at STARTING and is caught on the real path.
    symlinkSync(join(root, 'secrets'), `${root}-sec`);
    const spec: SandboxSpec = { level: 'process', capabilities: { filesystem: { mode: 'scoped', mount_paths: [{ path: `${root}-sec`, permissions: 'ro' }] } } };
    await args(spec, host).then(
      () => assert.unreachable('a bind inside the secrets dir must be refused'),
      (e) => {
        assert.is(e.code, 'sandbox-private-path');
        assert.match(e.message, /a directory of the runtime itself/);
      },
    );
  } finally {
    rmSync(`${root}-link`, { force: true });
    rmSync(`${root}-sec`, { force: true });
    rmSync(root, { recursive: true, force: true });
  }
});

test('scoped with nested mounts: the workspace is shown again with the permission of the innermost mount (rw outside, ro inside stays ro)', async () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'claw-private-')));
  try {
    mkdirSync(join(root, 'srv/claw/data/workspace'), { recursive: true });
    const priv = { dirs: [join(root, 'srv/claw/data')], files: [], shared: [join(root, 'srv/claw/data/workspace')] };
    const host = { ...fakeHost({ bwrap: true, cgroup: true }), private: priv };
    const spec: SandboxSpec = {
      level: 'process',
      capabilities: { filesystem: { mode: 'scoped', mount_paths: [{ path: join(root, 'srv'), permissions: 'rw' }, { path: join(root, 'srv/claw'), permissions: 'ro' }] } },
    };
    const a = await args(spec, host);
    const ws = join(root, 'srv/claw/data/workspace');
    assert.not.ok(has(a, '--bind', ws, ws), a.join(' '));
    assert.ok(has(a, '--ro-bind', ws, ws), a.join(' '));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a private directory that does not exist yet is made (0700) and masked: a bind shows the host live, so a later data_dir would appear', async () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'claw-private-')));
  try {
    const data = join(root, 'later/data');
    const priv = { dirs: [data], files: [], shared: [join(data, 'workspace')] };
    const host = { ...fakeHost({ bwrap: true, cgroup: true }), private: priv };
    for (const mode of ['full', 'read-only'] as const) {
      const a = await args({ level: 'process', capabilities: { filesystem: { mode } } }, host);
      assert.ok(has(a, '--tmpfs', data), `${mode}: ${a.join(' ')}`);
    }
    assert.is(statSync(data).mode & 0o777, 0o700);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("other calls' private dirs: listed and covered only where a bind shows the tmp root; this call's own are mounted back", async () => {
  const { root, host } = fixture();
  try {
    const own = join(root, 'claw-private-1-own');
    const other = join(root, 'claw-private-2-other');
    let listed = 0;
    const privateDirs = { root, list: async () => (listed++, { own, all: [own, other] }) };
    const run = async (spec: SandboxSpec) => {
      const p = planIsolation(spec, host);
      if (!p.ok) throw new Error(p.message);
      return bwrapArgs({ spec, plan: p.plan, root: true, workdir: `${own}/run-a`, cwd: `${own}/run-a`, secretDir: `${own}/secrets-a`, privateDirs, readOnly: [], maskCgroupFs: false });
    };
    for (const mode of ['deny', 'scoped'] as const) {
      const a = await run({ level: 'process', capabilities: { filesystem: { mode, mount_paths: mode === 'scoped' ? [{ path: join(root, 'data', 'workspace'), permissions: 'ro' }] : undefined } } });
      assert.is(listed, 0, `${mode}: no bind shows the tmp root, nothing to list`);
      assert.not.ok(a.includes(other), mode);
    }
    for (const mode of ['read-only', 'full'] as const) {
      const a = await run({ level: 'process', capabilities: { filesystem: { mode } } });
      assert.ok(has(a, '--tmpfs', other, '--remount-ro', other), `${mode}: another runtime's dir covered, read-only`);
      assert.ok(has(a, '--tmpfs', own) && !has(a, '--remount-ro', own), `${mode}: ours covered, writable for the mounts into it`);
      const at = (x: string[]) => a.findIndex((_, i) => x.every((s, j) => a[i + j] === s));
      const back = mode === 'full' ? ['--bind', `${own}/run-a`, `${own}/run-a`] : ['--tmpfs', `${own}/run-a`];
      assert.ok(at(back) > at(['--tmpfs', own]), `${mode}: the run dir is mounted after the cover`);
      assert.ok(at(['--ro-bind', `${own}/secrets-a`, `${own}/secrets-a`]) > at(['--tmpfs', own]), `${mode}: the secrets dir after the cover`);
    }
    assert.is(listed, 2);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("/dev and /proc are the sandbox's own, after every bind (a mount_path / would show the host's), with the kernel's knobs read-only", async () => {
  const { root, host } = fixture();
  try {
    for (const spec of [
      { level: 'process', capabilities: { filesystem: { mode: 'scoped', mount_paths: [{ path: '/', permissions: 'ro' }, { path: join(root, 'data/workspace'), permissions: 'rw' }] } } },
      { level: 'process', capabilities: { filesystem: { mode: 'read-only' } } },
      { level: 'process', capabilities: { filesystem: { mode: 'deny' } } },
    ] as SandboxSpec[]) {
      const a = await args(spec, host);
      const proc = a.indexOf('--proc');
      const at = (...x: string[]) => a.findIndex((_, i) => x.every((s, j) => a[i + j] === s));
      for (const bind of [['--ro-bind', '/', '/'], ['--bind', `${root}/data/workspace`, `${root}/data/workspace`], ['--ro-bind', '/usr', '/usr']]) {
        if (at(...bind) >= 0) assert.ok(proc > at(...bind) && a.indexOf('--dev') > at(...bind), `${bind.join(' ')} before /dev and /proc: ${a.join(' ')}`);
      }
      for (const k of PROC_READ_ONLY) assert.ok(has(a, '--ro-bind-try', `/proc/${k}`, `/proc/${k}`) && a.indexOf(`/proc/${k}`) > proc, k);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("a write-workspace skill's view (`/` ro, the workspace rw): the workspace is shown again through the data_dir mask writable", async () => {
  const { root, host } = fixture();
  try {
    const ws = join(root, 'data/workspace');
    const a = await args({ level: 'process', capabilities: { filesystem: { mode: 'scoped', mount_paths: [{ path: '/', permissions: 'ro' }, { path: ws, permissions: 'rw' }] } } }, host);
    const mask = a.findIndex((x, i) => x === '--tmpfs' && a[i + 1] === `${root}/data`);
    assert.ok(mask > 0, a.join(' '));
    assert.ok(has(a.slice(mask), '--bind', ws, ws), `rw again after the mask: ${a.join(' ')}`);
    assert.not.ok(has(a.slice(mask), '--ro-bind', ws, ws), a.join(' '));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('bound by descriptor: the object opened is the one judged (a symlink into /proc is refused on its real path) and bound', async () => {
  const { root, host } = fixture();
  const fds: number[] = [];
  try {
    mkdirSync(join(root, 'share'));
    const spec: SandboxSpec = { level: 'process', capabilities: { filesystem: { mode: 'scoped', mount_paths: [{ path: join(root, 'share'), permissions: 'ro' }] } } };
    const p = planIsolation(spec, host);
    if (!p.ok) throw new Error(p.message);
    const a = await bwrapArgs({ spec, plan: p.plan, root: true, workdir: '/tmp/claw-run-x', cwd: '/tmp/claw-run-x', readOnly: [['/usr/bin/env', '/opt/tool']], maskCgroupFs: false, fds });
    assert.is(fds.length, 2);
    assert.ok(has(a, '--ro-bind-fd', '3', join(root, 'share')) && has(a, '--ro-bind-fd', '4', '/opt/tool'), a.join(' '));
    assert.is(readlinkSync(`/proc/self/fd/${fds[0]}`), join(root, 'share'));
    symlinkSync('/proc/self', join(root, 'to-proc'));
    const bad: SandboxSpec = { level: 'process', capabilities: { filesystem: { mode: 'scoped', mount_paths: [{ path: join(root, 'to-proc'), permissions: 'ro' }] } } };
    const q = planIsolation(bad, host);
    if (!q.ok) throw new Error(q.message);
    await bwrapArgs({ spec: bad, plan: q.plan, root: true, workdir: '/tmp/claw-run-x', cwd: '/tmp/claw-run-x', readOnly: [], maskCgroupFs: false, fds }).then(
      () => assert.unreachable('a bind of /proc/<pid> through a symlink'),
      (e) => assert.is(e.code, 'sandbox-mount-path'),
    );
  } finally {
    for (const fd of fds) closeSync(fd);
    rmSync(root, { recursive: true, force: true });
  }
});

test('movableAncestor: a directory above a mask that the tool can rename (not a mount point, parent writable)', () => {
  const b = (dest: string, rw: boolean) => ({ dest, rw });
  const pts = (...p: string[]) => new Set(p);
  assert.is(movableAncestor('/srv/claw/data', [b('/srv', true)], pts('/srv', '/srv/claw/data')), '/srv/claw');
  assert.is(movableAncestor('/srv/a/b/data', [b('/srv', true)], pts('/srv', '/srv/a/b/data')), '/srv/a', 'the shallowest: one ro mount there covers all');
  assert.is(movableAncestor('/srv/claw/data', [b('/srv', true), b('/srv/claw', false)], pts('/srv', '/srv/claw', '/srv/claw/data')), undefined);
  assert.is(movableAncestor('/srv/data', [b('/srv', true)], pts('/srv', '/srv/data')), undefined, 'directly inside: the mask is a mount point');
  assert.is(movableAncestor('/srv/x/claw/data', [b('/srv', true), b('/srv/x/claw', false)], pts('/srv', '/srv/x/claw', '/srv/x/claw/data')), '/srv/x');
  assert.is(movableAncestor('/var/lib/claw/data', [b('/', false), b('/var/lib/claw/data/workspace', true)], pts('/', '/var/lib/claw/data')), undefined, "a write-workspace skill's view");
  assert.is(movableAncestor('/var/lib/claw/data', [b('/', true)], pts('/', '/var/lib/claw/data')), '/var');
});

test.run();
