// makeDirs (src/node/make-dirs.ts): mkdir -p whose error names the real cause. Node's recursive mkdir says
// ENOENT for a directory it cannot create on a read-only filesystem; the nearest existing ancestor's EROFS or
// EACCES is reported instead. The last test makes a real read-only filesystem (a read-only bind mount, as root).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeDirs, MakeDirsError, type MakeDirsFs } from '../../src/node/make-dirs.ts';

const errno = (code: string) => Object.assign(new Error(code), { code });

function fakeFs(existing: string[], mkdirCode: string, accessCode?: string): MakeDirsFs {
  return {
    mkdirSync: () => {
      throw errno(mkdirCode);
    },
    existsSync: (p) => existing.includes(p),
    accessWritable: () => {
      if (accessCode) throw errno(accessCode);
    },
  };
}

test('ENOENT from mkdir on a read-only filesystem is reported as the ancestor EROFS', () => {
  try {
    makeDirs('/srv/claw/data/memory', 0o700, fakeFs(['/srv', '/'], 'ENOENT', 'EROFS'));
    assert.unreachable('must throw');
  } catch (e) {
    assert.instance(e, MakeDirsError);
    const m = e as MakeDirsError;
    assert.is(m.code, 'fs.mkdir');
    assert.is(m.errno, 'EROFS');
    assert.is(m.at, '/srv');
    assert.is(m.message, 'cannot create directory /srv/claw/data/memory: EROFS (/srv is on a read-only filesystem)');
  }
});

test('an unwritable ancestor is EACCES; other errors are reported as they are', () => {
  assert.throws(() => makeDirs('/home/x/.claw-data', 0o700, fakeFs(['/home/x'], 'ENOENT', 'EACCES')), /EACCES \(\/home\/x is not writable by this user\)/);
  assert.throws(() => makeDirs('/d/memory', 0o700, fakeFs(['/d'], 'ENOSPC')), /cannot create directory \/d\/memory: ENOSPC \(\/d\/memory is on a full filesystem\)/);
  // A writable ancestor and still ENOENT (a race: the parent went away): ENOENT stands.
  assert.throws(() => makeDirs('/a/b', 0o700, fakeFs(['/a'], 'ENOENT')), /cannot create directory \/a\/b: ENOENT$/);
});

test('it creates missing parents with the mode asked for', () => {
  const d = mkdtempSync(join(tmpdir(), 'claw-mkdirs-'));
  try {
    makeDirs(join(d, 'a', 'b'), 0o700);
    assert.ok(existsSync(join(d, 'a', 'b')));
    assert.is(statSync(join(d, 'a')).mode & 0o777, 0o700 & ~process.umask());
    writeFileSync(join(d, 'f'), '');
    assert.throws(() => makeDirs(join(d, 'f', 'x')), /ENOTDIR/);
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});

const canMount = process.platform === 'linux' && process.getuid?.() === 0 && spawnSync('mount', ['--version']).status === 0;
(canMount ? test : test.skip)('a real read-only filesystem (a read-only bind mount of a temp dir): EROFS, where Node says ENOENT', () => {
  const d = mkdtempSync(join(tmpdir(), 'claw-mkdirs-ro-'));
  const mount = (...args: string[]) => spawnSync('mount', args, { encoding: 'utf8' });
  let mounted = false;
  try {
    const m1 = mount('--bind', d, d);
    if (m1.status !== 0) return; // no mount here (a container without CAP_SYS_ADMIN): nothing to test
    mounted = true;
    assert.is(mount('-o', 'remount,bind,ro', d).status, 0);
    const target = join(d, 'data', 'memory');
    let nodeSays: string | undefined;
    try {
      mkdirSync(target, { recursive: true });
    } catch (e) {
      nodeSays = (e as NodeJS.ErrnoException).code;
    }
    assert.ok(nodeSays === 'ENOENT' || nodeSays === 'EROFS', `node: ${nodeSays}`);
    try {
      makeDirs(target);
      assert.unreachable('must throw');
    } catch (e) {
      assert.instance(e, MakeDirsError);
      assert.is((e as MakeDirsError).errno, 'EROFS');
      assert.match((e as Error).message, `(${d} is on a read-only filesystem)`);
    }
  } finally {
    if (mounted) spawnSync('umount', [d]);
    rmSync(d, { recursive: true, force: true });
  }
});

test.run();
