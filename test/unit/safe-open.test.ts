// openInScope (src/sandbox/safe-open.ts): symlinks at every component, `..`, absolute and dangling
// links, a fifo or a directory as the final component, create_dirs, and a tree swapped between two
// steps of the walk (an injected I/O layer plays the racer deterministically).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { constants } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeOpenIo, openInScope, type OpenIo, type OpenRequest } from '../../src/sandbox/safe-open.ts';

// root/ws (rw)   root/conf (ro)   root/outside   root/ws/secret (denied)
const root = realpathSync(mkdtempSync(join(tmpdir(), 'claw-safeopen-')));
const ws = join(root, 'ws');
const outside = join(root, 'outside');
for (const d of ['ws/sub', 'ws/d', 'ws/secret', 'conf', 'outside/dir']) mkdirSync(join(root, d), { recursive: true });
writeFileSync(join(ws, 'sub/file'), 'inside');
writeFileSync(join(ws, 'd/file'), 'in-d');
writeFileSync(join(ws, 'secret/key'), 'k');
writeFileSync(join(root, 'conf/x'), 'conf');
writeFileSync(join(outside, 'data'), 'OUTSIDE');
writeFileSync(join(outside, 'file'), 'OUTSIDE');
symlinkSync('../outside', join(ws, 'rel-out')); // first component
symlinkSync(outside, join(ws, 'sub/abs-out')); // second component, absolute
symlinkSync(join(outside, 'data'), join(ws, 'sub/final-out')); // final component
symlinkSync('sub', join(ws, 'rel-in'));
symlinkSync(join(ws, 'sub'), join(ws, 'abs-in'));
symlinkSync('sub/file', join(ws, 'final-in'));
symlinkSync(join(root, 'conf'), join(ws, 'to-conf'));
symlinkSync('sub/missing', join(ws, 'dangle-in'));
symlinkSync(join(outside, 'new'), join(ws, 'dangle-out'));
symlinkSync(join(ws, 'secret/key'), join(ws, 'to-secret'));
symlinkSync('loop', join(ws, 'loop'));
symlinkSync(join(ws, 'sub/file'), join(outside, 'back-in')); // an outside link that leads back in
execFileSync('mkfifo', [join(ws, 'fifo')]);

const fs = {
  mode: 'scoped' as const,
  mount_paths: [
    { path: ws, permissions: 'rw' as const },
    { path: join(root, 'conf'), permissions: 'ro' as const },
  ],
  denied_paths: [join(ws, 'secret')],
};

async function read(path: string, io?: OpenIo, caps: OpenRequest['fs'] = fs) {
  const r = await openInScope({ path, cwd: ws, fs: caps }, io);
  if (!r.ok) return { refused: r.reason };
  try {
    return { text: (await r.fh.readFile()).toString(), real: r.real };
  } finally {
    await r.fh.close();
  }
}

async function write(path: string, o: { append?: boolean; createDirs?: boolean } = {}, caps: OpenRequest['fs'] = fs) {
  const r = await openInScope({ path, cwd: ws, fs: caps, write: { append: o.append ?? false, createDirs: o.createDirs ?? false } });
  if (!r.ok) return { refused: r.reason };
  try {
    await r.fh.writeFile('w');
    return { real: r.real };
  } finally {
    await r.fh.close();
  }
}

const errCode = (p: Promise<unknown>) => p.then(() => 'no error', (e) => (e as { code?: string }).code);

test('a symlink leading out is refused at every component: first, middle, final; for reads and writes', async () => {
  for (const p of ['rel-out/data', 'sub/abs-out/data', 'sub/final-out', 'rel-out/dir/../data']) {
    const r = await read(p);
    assert.ok('refused' in r, `${p}: ${JSON.stringify(r)}`);
    assert.match((r as { refused: string }).refused, /outside the sandbox's mount_paths/);
  }
  for (const p of ['rel-out/made', 'sub/abs-out/made', 'sub/final-out']) {
    assert.ok('refused' in (await write(p)), p);
    assert.ok('refused' in (await write(p, { append: true })), p);
  }
  assert.not.ok(existsSync(join(outside, 'made')));
  assert.is(readFileSync(join(outside, 'data'), 'utf8'), 'OUTSIDE', 'not truncated');
});

test('a symlink whose target stays inside is followed (relative, absolute, final); real is the target', async () => {
  for (const p of ['rel-in/file', 'abs-in/file', 'final-in', `${ws}/sub/./file`, join(outside, 'back-in')]) {
    assert.equal(await read(p), { text: 'inside', real: join(ws, 'sub/file') }, p);
  }
  assert.equal(await read('to-conf/x'), { text: 'conf', real: join(root, 'conf/x') }, 'into another mount');
  const ro = await write('to-conf/x');
  assert.ok('refused' in ro && /read-only mount/.test(ro.refused ?? ''), JSON.stringify(ro));
});

test('`..` is applied to the path really taken: after a link it is the target\'s parent', async () => {
  assert.equal(await read('sub/../sub/file'), { text: 'inside', real: join(ws, 'sub/file') });
  for (const p of ['../outside/data', 'sub/../../outside/data', `${ws}/../outside/data`, 'sub/abs-out/../outside/data']) {
    assert.ok('refused' in (await read(p)), p);
  }
  // sub/abs-out/.. is root (outside's parent), not ws/sub: root/ws/sub/file through it is inside again.
  assert.equal(await read('sub/abs-out/../ws/sub/file'), { text: 'inside', real: join(ws, 'sub/file') });
});

test('dangling links: inside → ENOENT for a read, a write creates the target; outside → refused, nothing made', async () => {
  assert.is(await errCode(read('dangle-in')), 'ENOENT');
  assert.equal(await write('dangle-in'), { real: join(ws, 'sub/missing') });
  assert.is(readFileSync(join(ws, 'sub/missing'), 'utf8'), 'w');
  assert.ok('refused' in (await read('dangle-out')));
  assert.ok('refused' in (await write('dangle-out')));
  assert.not.ok(existsSync(join(outside, 'new')));
});

test('a fifo or a directory as the final component is refused without blocking', async () => {
  const t0 = Date.now();
  assert.is(await errCode(read('fifo')), 'not-a-regular-file');
  const w = await errCode(write('fifo'));
  assert.ok(w === 'ENXIO' || w === 'not-a-regular-file', w); // O_NONBLOCK write open of a fifo with no reader
  assert.ok(Date.now() - t0 < 2000);
  for (const p of ['sub', 'sub/', '.', 'sub/..']) assert.is(await errCode(read(p)), 'not-a-regular-file', p);
  const d = await errCode(write('sub'));
  assert.ok(d === 'EISDIR' || d === 'not-a-regular-file', d);
});

test('create_dirs makes missing parents inside; through a link out, or out by `..`, it makes nothing', async () => {
  assert.equal(await write('new/deep/f', { createDirs: true }), { real: join(ws, 'new/deep/f') });
  assert.is(await errCode(write('new2/f')), 'ENOENT', 'no create_dirs: no parents');
  for (const p of ['rel-out/newdir/f', 'sub/abs-out/n2/f', '../made-dir/f', 'made-here/../../made-dir/f']) {
    assert.ok('refused' in (await write(p, { createDirs: true })), p);
  }
  assert.not.ok(existsSync(join(outside, 'newdir')) || existsSync(join(outside, 'n2')) || existsSync(join(root, 'made-dir')));
  assert.not.ok(existsSync(join(ws, 'made-here')), 'a directory is judged before it is made');
  assert.ok('refused' in (await write('to-conf/newdir/f', { createDirs: true })), 'read-only mount');
  assert.not.ok(existsSync(join(root, 'conf/newdir')));
});

test('denied paths, link loops, a file used as a directory', async () => {
  for (const p of ['secret/key', 'to-secret', 'sub/../secret/key']) {
    const r = await read(p);
    assert.ok('refused' in r && /denied path/.test(r.refused ?? ''), p);
  }
  assert.is(await errCode(read('loop/x')), 'ELOOP');
  assert.is(await errCode(read('sub/file/x')), 'ENOTDIR');
  assert.ok('refused' in (await read('/etc/passwd')));
  assert.ok('refused' in (await read('/no/such/dir/file')), 'outside and missing: refused, not ENOENT');
});

test('a directory swapped for a link to the outside mid-walk: the held directory is used, or the link is judged', async () => {
  const d = join(ws, 'd');
  const swap = () => {
    renameSync(d, `${d}.real`);
    symlinkSync(outside, d);
  };
  const unswap = () => {
    unlinkSync(d);
    renameSync(`${d}.real`, d);
  };
  // The racer wins right after the walk opened d: the file is read from the directory the walk holds.
  const after: OpenIo = {
    ...nodeOpenIo,
    async open(p, flags, mode) {
      const fh = await nodeOpenIo.open(p, flags, mode);
      if (p.endsWith('/d') && flags & constants.O_DIRECTORY) swap();
      return fh;
    },
  };
  try {
    assert.equal(await read(`${ws}/d/file`, after), { text: 'in-d', real: join(ws, 'd/file') });
  } finally {
    unswap();
  }
  // The racer wins right before: the walk meets the link and judges where it leads.
  const before: OpenIo = {
    ...nodeOpenIo,
    async open(p, flags, mode) {
      if (p.endsWith('/d') && flags & constants.O_DIRECTORY) swap();
      return nodeOpenIo.open(p, flags, mode);
    },
  };
  try {
    const r = await read(`${ws}/d/file`, before);
    assert.ok('refused' in r, JSON.stringify(r));
  } finally {
    unswap();
  }
});

test('unconfined (full, no denied paths): an ordinary open; without /proc/self/fd a scope is refused, not raced', async () => {
  assert.equal(await read(join(outside, 'back-in'), undefined, { mode: 'full' }), { text: 'inside', real: join(outside, 'back-in') });
  const noProc: OpenIo = { ...nodeOpenIo, fdPaths: async () => false };
  const r = await read('sub/file', noProc);
  assert.ok('refused' in r && /proc\/self\/fd/.test(r.refused ?? ''), JSON.stringify(r));
  assert.equal(await read('sub/file', noProc, { mode: 'full' }), { text: 'inside', real: join(ws, 'sub/file') });
  assert.ok('refused' in (await read('sub/file', undefined, { mode: 'deny' })));
  assert.ok('refused' in (await write('sub/file', {}, { mode: 'read-only' })));
});

test('a device is never opened, only named: /dev/watchdog or a serial tty act on open', async () => {
  const O_PATH = 0o10000000;
  const opened: string[] = [];
  const spy: OpenIo = {
    ...nodeOpenIo,
    async open(p, flags, mode) {
      const fh = await nodeOpenIo.open(p, flags, mode);
      if (!(flags & O_PATH) && !(flags & constants.O_DIRECTORY) && (await fh.stat()).isCharacterDevice()) opened.push(`${p} ${flags}`);
      return fh;
    },
  };
  const dev = { mode: 'scoped' as const, mount_paths: [{ path: '/dev', permissions: 'rw' as const }] };
  for (const caps of [dev, { mode: 'full' as const }, { mode: 'full' as const, denied_paths: [outside] }]) {
    for (const path of ['/dev/null', '/dev/zero']) {
      const r = await openInScope({ path, cwd: ws, fs: caps }, spy).then(
        (x) => (x.ok ? x.fh.close().then(() => 'opened') : x.reason),
        (e) => (e as { code?: string }).code,
      );
      assert.is(r, 'not-a-regular-file', path);
      const w = await openInScope({ path, cwd: ws, fs: caps, write: { append: false, createDirs: false } }, spy).then(
        (r) => (r.ok ? r.fh.close().then(() => 'opened') : r.reason),
        (e) => (e as { code?: string }).code,
      );
      assert.is(w, 'not-a-regular-file', path);
    }
  }
  assert.equal(opened, []);
});

test('a path longer than PATH_MAX is refused before anything is made (no mkdir per component, no fd per level)', async () => {
  const long = `${'a/'.repeat(2100)}f`;
  const r = await openInScope({ path: long, cwd: ws, fs, write: { append: false, createDirs: true } }).then(
    (x) => (x.ok ? x.fh.close().then(() => 'opened') : x.reason),
    (e) => (e as { code?: string }).code,
  );
  assert.ok(r !== 'opened', r);
  assert.not.ok(existsSync(join(ws, 'a')));
});

test.after(() => rmSync(root, { recursive: true, force: true }));
test.run();
