// The code-cache files of the loader (src/node/code-cache.ts, docs/startup.md): where they live, how they are
// named, that they are written atomically and privately, and that an untrusted file is never handed to V8.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cacheCommand, cacheDir, cacheFileName, cacheWriter, hashText, readCache, trimCache, writeCache } from '../../src/node/code-cache.ts';

const tmp = () => mkdtempSync(join(tmpdir(), 'claw-cc-'));
const bytes = (n: number, seed = 1) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);

test('cacheDir: CLAW_CACHE_DIR, then XDG_CACHE_HOME (absolute only), then HOME, then LOCALAPPDATA; off switches', () => {
  const cwd = () => '/work';
  assert.is(cacheDir({ CLAW_CACHE_DIR: '/c', XDG_CACHE_HOME: '/x', HOME: '/h' }, cwd), '/c');
  assert.is(cacheDir({ CLAW_CACHE_DIR: 'rel/c', HOME: '/h' }, cwd), '/work/rel/c');
  assert.is(cacheDir({ XDG_CACHE_HOME: '/x', HOME: '/h' }, cwd), '/x/claw-edge');
  assert.is(cacheDir({ XDG_CACHE_HOME: 'relative', HOME: '/h' }, cwd), '/h/.cache/claw-edge');
  assert.is(cacheDir({ HOME: '/h' }, cwd), '/h/.cache/claw-edge');
  assert.is(cacheDir({ LOCALAPPDATA: 'C:\\Users\\a\\AppData\\Local' }, cwd), 'C:\\Users\\a\\AppData\\Local/claw-edge');
  assert.is(cacheDir({}, cwd), undefined);
  assert.is(cacheDir({ CLAW_CODE_CACHE: '0', CLAW_CACHE_DIR: '/c', HOME: '/h' }, cwd), undefined);
  assert.is(cacheDir({ CLAW_CACHE_DIR: '', HOME: '/h' }, cwd), undefined);
});

test('cacheFileName: chunk file (its content hash), command, Node version, arch and a hash of the flags', () => {
  const k = { chunk: 'claw-0123abcd', command: 'run', nodeVersion: 'v20.20.2', arch: 'x64', flags: '' };
  assert.is(cacheFileName(k), `claw-0123abcd-run-v20.20.2-x64-${hashText('')}.v8cache`);
  assert.is(hashText(''), '811c9dc5');
  assert.is(hashText('a'), 'e40c292c'); // FNV-1a 32 of "a"
  assert.is.not(cacheFileName({ ...k, flags: '--no-opt\0' }), cacheFileName(k));
  assert.is.not(cacheFileName({ ...k, command: 'validate' }), cacheFileName(k));
});

test('cacheCommand: a command word, never a flag, nothing, or an internal command (a tool child: its HOME is the tool workspace)', () => {
  assert.is(cacheCommand(['node', 'claw.mjs', 'run', 'x.yaml']), 'run');
  assert.is(cacheCommand(['node', 'claw.mjs', 'self_test']), 'self_test');
  assert.is(cacheCommand(['node', 'claw.mjs', '__builtin']), undefined);
  assert.is(cacheCommand(['node', 'claw.mjs', '--version']), undefined);
  assert.is(cacheCommand(['node', 'claw.mjs']), undefined);
  assert.is(cacheCommand(['node', 'claw.mjs', '../x']), undefined);
});

test('write then read gives the same bytes, for any length; the file is the data V8 gave', () => {
  const dir = tmp();
  try {
    for (const n of [1, 3, 4, 5, 16 * 1024, 16 * 1024 + 3, 100_001]) {
      const data = bytes(n, n);
      assert.ok(writeCache(dir, `f${n}.v8cache`, data));
      const file = join(dir, `f${n}.v8cache`);
      assert.is(statSync(file).size, n);
      assert.equal([...(readCache(file) ?? [])], [...data], `length ${n}`);
      if (typeof process.getuid === 'function') assert.is(statSync(file).mode & 0o777, 0o600);
    }
    assert.equal(readdirSync(dir).filter((n) => n.endsWith('.tmp')), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an empty file, a missing one or a directory is no cache', () => {
  const dir = tmp();
  try {
    writeFileSync(join(dir, 'x.v8cache'), new Uint8Array(0), { mode: 0o600 });
    assert.is(readCache(join(dir, 'x.v8cache')), undefined);
    assert.is(readCache(join(dir, 'missing.v8cache')), undefined);
    assert.is(readCache(dir), undefined, 'a directory');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('cacheWriter: nothing before the delay, then every chunk of the batch; a later chunk starts a batch of its own', async () => {
  const dir = tmp();
  try {
    const save = cacheWriter(dir, 30);
    let made = 0;
    save('a-00000000-run-v20.0.0-x64-811c9dc5.v8cache', () => (made++, bytes(3)));
    save('b-00000000-run-v20.0.0-x64-811c9dc5.v8cache', () => (made++, bytes(4)));
    assert.is(made, 0, 'created when written, not when compiled');
    await new Promise((r) => setTimeout(r, 80));
    assert.equal(readdirSync(dir).sort(), ['a-00000000-run-v20.0.0-x64-811c9dc5.v8cache', 'b-00000000-run-v20.0.0-x64-811c9dc5.v8cache']);
    save('c-00000000-run-v20.0.0-x64-811c9dc5.v8cache', () => bytes(5));
    await new Promise((r) => setTimeout(r, 80));
    assert.is(readdirSync(dir).length, 3);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a file others can write is not loaded', () => {
  if (typeof process.getuid !== 'function') return;
  const dir = tmp();
  try {
    const file = join(dir, 'x.v8cache');
    writeFileSync(file, bytes(64));
    chmodSync(file, 0o600);
    assert.ok(readCache(file));
    chmodSync(file, 0o620);
    assert.is(readCache(file), undefined, 'group-writable');
    chmodSync(file, 0o602);
    assert.is(readCache(file), undefined, 'world-writable');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('writeCache never throws: an unusable directory gives false and leaves nothing behind', () => {
  const dir = tmp();
  try {
    const file = join(dir, 'plain-file');
    writeFileSync(file, 'x');
    assert.is(writeCache(join(file, 'sub'), 'a.v8cache', bytes(10)), false);
    if (process.getuid?.() !== 0) {
      const ro = join(dir, 'ro');
      mkdirSync(ro);
      chmodSync(ro, 0o555);
      assert.is(writeCache(ro, 'a.v8cache', bytes(10)), false);
      assert.equal(readdirSync(ro), []);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the directory is made with at most its parent: a HOME that does not exist gets nothing', () => {
  const dir = tmp();
  try {
    assert.is(writeCache(join(dir, 'nohome', '.cache', 'claw-edge'), 'a.v8cache', bytes(10)), false);
    assert.equal(readdirSync(dir), []);
    mkdirSync(join(dir, 'home'));
    assert.ok(writeCache(join(dir, 'home', '.cache', 'claw-edge'), 'a.v8cache', bytes(10)));
    assert.equal([...(readCache(join(dir, 'home', '.cache', 'claw-edge', 'a.v8cache')) ?? [])], [...bytes(10)]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('old cache files beyond 256 are removed, newest kept; files not named by cacheFileName are left alone', () => {
  const dir = tmp();
  try {
    const name = (i: number) => cacheFileName({ chunk: `claw-${String(i).padStart(8, '0')}`, command: 'run', nodeVersion: 'v20.20.2', arch: 'x64', flags: '' });
    for (let i = 0; i < 260; i++) {
      const f = join(dir, name(i));
      writeFileSync(f, 'x');
      utimesSync(f, 1_000_000 + i * 1000, 1_000_000 + i * 1000);
    }
    writeFileSync(join(dir, 'notes.txt'), 'kept');
    writeFileSync(join(dir, 'other-tool.v8cache'), 'kept');
    utimesSync(join(dir, 'other-tool.v8cache'), 1000, 1000);
    trimCache(dir);
    const left = readdirSync(dir).sort();
    // The 256 newest survive: 4 .. 259.
    assert.equal(left.filter((n) => n.startsWith('claw-')), Array.from({ length: 256 }, (_, i) => name(i + 4)).sort());
    assert.is(readFileSync(join(dir, 'notes.txt'), 'utf8'), 'kept');
    assert.is(readFileSync(join(dir, 'other-tool.v8cache'), 'utf8'), 'kept');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
