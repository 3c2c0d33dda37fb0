// The code-cache files of the boot loader (src/node/code-cache.ts, docs/startup.md): where they live, how they
// are named, and that a damaged, truncated, foreign or untrusted file is never handed to V8 (V8 does not check a
// code cache's payload in release builds: a flipped byte crashes the process).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cacheCommand, cacheDir, cacheFileName, encodeCache, hashText, readCache, writeCache } from '../../src/node/code-cache.ts';

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

test('cacheFileName: build, command, Node version, arch and a hash of the flags', () => {
  const k = { buildId: '0123456789abcdef', command: 'run', nodeVersion: 'v20.20.2', arch: 'x64', flags: '' };
  assert.is(cacheFileName(k), `0123456789abcdef-run-v20.20.2-x64-${hashText('')}.v8cache`);
  assert.is(hashText(''), '811c9dc5');
  assert.is(hashText('a'), 'e40c292c'); // FNV-1a 32 of "a"
  assert.is.not(cacheFileName({ ...k, flags: '--no-opt\0' }), cacheFileName(k));
  assert.is.not(cacheFileName({ ...k, command: 'validate' }), cacheFileName(k));
});

test('cacheCommand: a command word, never a flag or nothing', () => {
  assert.is(cacheCommand(['node', 'claw.mjs', 'run', 'x.yaml']), 'run');
  assert.is(cacheCommand(['node', 'claw.mjs', '__builtin']), '__builtin');
  assert.is(cacheCommand(['node', 'claw.mjs', '--version']), undefined);
  assert.is(cacheCommand(['node', 'claw.mjs']), undefined);
  assert.is(cacheCommand(['node', 'claw.mjs', '../x']), undefined);
});

test('write then read gives the same bytes, for any length; the file holds two copies', () => {
  const dir = tmp();
  try {
    for (const n of [1, 3, 4, 5, 16 * 1024, 16 * 1024 + 3, 100_001]) {
      const data = bytes(n, n);
      assert.ok(writeCache(dir, `f${n}.v8cache`, data));
      const file = join(dir, `f${n}.v8cache`);
      assert.is(statSync(file).size, 16 + 2 * (Math.ceil(n / 4) * 4));
      assert.equal([...(readCache(file) ?? [])], [...data], `length ${n}`);
      if (typeof process.getuid === 'function') assert.is(statSync(file).mode & 0o777, 0o600);
    }
    assert.equal(readdirSync(dir).filter((n) => n.endsWith('.tmp')), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('damaged, truncated, foreign or empty files are refused', () => {
  const dir = tmp();
  try {
    const data = bytes(40_003);
    const good = encodeCache(data);
    const span = 40_004;
    const cases: [string, Uint8Array][] = [];
    const flip = (at: number) => {
      const b = Uint8Array.from(good);
      b[at] ^= 0x01;
      return b;
    };
    cases.push(['byte in the first copy', flip(16 + 20_000)]);
    cases.push(['byte in the second copy', flip(16 + span + 39_999)]);
    cases.push(['last byte of the second copy', flip(16 + span + 40_002)]);
    cases.push(['magic', flip(3)]);
    cases.push(['length field', flip(8)]);
    cases.push(['complement of the length', flip(12)]);
    cases.push(['truncated', good.subarray(0, good.length - 4)]);
    cases.push(['header only', good.subarray(0, 16)]);
    cases.push(['empty', new Uint8Array(0)]);
    cases.push(['garbage', bytes(good.length, 7)]);
    cases.push(['one copy zeroed', (() => { const b = Uint8Array.from(good); b.fill(0, 16 + span); return b; })()]);
    for (const [name, content] of cases) {
      const file = join(dir, 'x.v8cache');
      writeFileSync(file, content, { mode: 0o600 });
      chmodSync(file, 0o600);
      assert.is(readCache(file), undefined, name);
    }
    // The same file intact is accepted (the cases above fail for their damage, not for the setup).
    writeFileSync(join(dir, 'x.v8cache'), good);
    assert.equal([...(readCache(join(dir, 'x.v8cache')) ?? [])], [...data]);
    assert.is(readCache(join(dir, 'missing.v8cache')), undefined);
    assert.is(readCache(dir), undefined, 'a directory');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a file others can write is not loaded', () => {
  if (typeof process.getuid !== 'function') return;
  const dir = tmp();
  try {
    const file = join(dir, 'x.v8cache');
    writeFileSync(file, encodeCache(bytes(64)));
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

test('old cache files beyond 24 are removed, newest kept; files not named by cacheFileName are left alone', () => {
  const dir = tmp();
  try {
    const name = (i: number) => cacheFileName({ buildId: `${String(i).padStart(2, '0')}${'a'.repeat(14)}`, command: 'run', nodeVersion: 'v20.20.2', arch: 'x64', flags: '' });
    for (let i = 0; i < 30; i++) {
      const f = join(dir, name(i));
      writeFileSync(f, 'x');
      utimesSync(f, 1_000_000 + i * 1000, 1_000_000 + i * 1000);
    }
    writeFileSync(join(dir, 'notes.txt'), 'kept');
    writeFileSync(join(dir, 'other-tool.v8cache'), 'kept');
    utimesSync(join(dir, 'other-tool.v8cache'), 1000, 1000);
    const newest = cacheFileName({ buildId: 'ffffffffffffffff', command: 'validate', nodeVersion: 'v22.23.3', arch: 'arm64', flags: '--x' });
    assert.ok(writeCache(dir, newest, bytes(8)));
    const left = readdirSync(dir).sort();
    assert.ok(left.includes(newest));
    // The 23 newest old ones survive: 07 .. 29.
    assert.equal(left.filter((n) => n.endsWith('aaaaaaaaaaaaaa-run-v20.20.2-x64-811c9dc5.v8cache')), Array.from({ length: 23 }, (_, i) => name(i + 7)).sort());
    assert.is(readFileSync(join(dir, 'notes.txt'), 'utf8'), 'kept');
    assert.is(readFileSync(join(dir, 'other-tool.v8cache'), 'utf8'), 'kept');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
