import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkPath, resolveReal } from '../../src/sandbox/paths.ts';

// Tree:  root/ws (rw)  root/ws/cfg (ro, nested)  root/conf (ro)  root/outside  root/ws/secret (denied)
//        root/ws/escape -> ../outside   root/ws/abs-escape -> root/outside   root/ws/loop -> loop
const root = realpathSync(mkdtempSync(join(tmpdir(), 'claw-paths-')));
const ws = join(root, 'ws');
for (const d of ['ws/cfg', 'conf', 'outside', 'ws/secret', 'ws/sub']) mkdirSync(join(root, d), { recursive: true });
writeFileSync(join(root, 'outside/data'), 'x');
writeFileSync(join(root, 'ws/secret/key'), 'k');
writeFileSync(join(root, 'ws/file'), 'f');
symlinkSync('../outside', join(ws, 'escape'));
symlinkSync(join(root, 'outside'), join(ws, 'abs-escape'));
symlinkSync(join(root, 'ws/secret/key'), join(ws, 'key-link'));
symlinkSync('loop', join(ws, 'loop'));
symlinkSync('sub/..', join(ws, 'dotdot-link'));
symlinkSync(join(root, 'outside'), join(ws, 'sub/up')); // ws/sub/up/../data → outside/../data, not ws/sub/data

const scoped = {
  mode: 'scoped' as const,
  mount_paths: [
    { path: ws, permissions: 'rw' as const },
    { path: join(ws, 'cfg'), permissions: 'ro' as const },
    { path: join(root, 'conf'), permissions: 'ro' as const },
  ],
  denied_paths: [join(ws, 'secret')],
};

test('resolveReal: symlinks are followed before `..` is applied; missing tails are kept', async () => {
  assert.is(await resolveReal(join(ws, 'escape/data')), join(root, 'outside/data'));
  assert.is(await resolveReal(`${ws}/sub/up/../data`), join(root, 'data'));
  assert.is(await resolveReal(join(ws, 'new/dir/file')), join(ws, 'new/dir/file'));
  assert.is(await resolveReal(join(ws, 'escape/new-file')), join(root, 'outside/new-file'));
  try {
    await resolveReal(join(ws, 'loop/x'));
    assert.unreachable('loop');
  } catch (e) {
    assert.is((e as NodeJS.ErrnoException).code, 'ELOOP');
  }
});

test('scoped: inside a rw mount → ok, read and write; relative paths resolve against cwd', async () => {
  assert.equal(await checkPath('file', 'write', scoped, ws), { ok: true, real: join(ws, 'file') });
  assert.equal(await checkPath(join(ws, 'new/deep/file'), 'write', scoped, '/'), { ok: true, real: join(ws, 'new/deep/file') });
  assert.ok((await checkPath(join(root, 'conf'), 'read', scoped, '/')).ok);
});

test('scoped: `..` out of the mount is denied', async () => {
  const r = await checkPath('../outside/data', 'read', scoped, ws);
  assert.not.ok(r.ok);
  assert.not.ok((await checkPath(`${ws}/sub/../../outside/data`, 'read', scoped, '/')).ok);
});

test('scoped: symlinks out of the mount are denied (relative, absolute, and for writes of new files)', async () => {
  for (const p of ['escape/data', 'abs-escape/data', 'escape/new-file', 'sub/up/../data']) {
    const r = await checkPath(p, p.includes('new') ? 'write' : 'read', scoped, ws);
    assert.not.ok(r.ok, p);
    if (!r.ok) assert.match(r.reason, /outside the sandbox's mount_paths/);
  }
  // A link that stays inside is fine.
  assert.ok((await checkPath('dotdot-link/file', 'read', scoped, ws)).ok);
});

test('scoped: the deepest mount decides; a ro mount nested in a rw one refuses writes', async () => {
  assert.ok((await checkPath('cfg/settings', 'read', scoped, ws)).ok);
  const w = await checkPath('cfg/settings', 'write', scoped, ws);
  assert.not.ok(w.ok);
  if (!w.ok) assert.match(w.reason, /read-only mount/);
  assert.not.ok((await checkPath(join(root, 'conf/x'), 'write', scoped, '/')).ok);
});

test('denied_paths win over mounts, also through a symlink', async () => {
  for (const p of ['secret/key', 'secret', 'key-link', 'secret/new']) {
    const r = await checkPath(p, 'read', scoped, ws);
    assert.not.ok(r.ok, p);
    if (!r.ok) assert.match(r.reason, /denied path/);
  }
  const full = { mode: 'full' as const, denied_paths: [join(ws, 'secret')] };
  assert.not.ok((await checkPath('key-link', 'read', full, ws)).ok);
  assert.ok((await checkPath(join(root, 'outside/data'), 'write', full, ws)).ok);
});

test('deny mode denies everything; read-only denies writes; full allows; no filesystem block = full', async () => {
  assert.not.ok((await checkPath('file', 'read', { mode: 'deny' }, ws)).ok);
  assert.ok((await checkPath('file', 'read', { mode: 'read-only' }, ws)).ok);
  const w = await checkPath('file', 'write', { mode: 'read-only' }, ws);
  assert.not.ok(w.ok);
  if (!w.ok) assert.match(w.reason, /read-only/);
  assert.ok((await checkPath('/etc/hostname', 'write', { mode: 'full' }, ws)).ok);
  assert.ok((await checkPath('/etc/hostname', 'read', undefined, ws)).ok);
});

test('invalid and looping paths are refused', async () => {
  assert.not.ok((await checkPath('', 'read', { mode: 'full' }, ws)).ok);
  assert.not.ok((await checkPath('a\0b', 'read', { mode: 'full' }, ws)).ok);
  assert.not.ok((await checkPath('loop/x', 'read', { mode: 'full' }, ws)).ok);
});

test.after(() => rmSync(root, { recursive: true, force: true }));
test.run();
