// The built bundle's V8 code cache (docs/startup.md), end to end: the first `claw run` leaves one cache file,
// the second uses it (and so does not rewrite it), a damaged, foreign or garbage file is ignored and replaced,
// an unusable cache directory never fails a run, and the replies are the same in every case.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, chmodSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { CLAW, ROOT } from './helpers/claw-process.ts';

const session = readFileSync(join(ROOT, 'examples/minimal/session.ndjson'), 'utf8');

function run(env: Record<string, string>, args = ['run', 'examples/minimal/claw.yaml']) {
  const r = spawnSync(process.execPath, [CLAW, ...args], {
    cwd: ROOT,
    input: session,
    encoding: 'utf8',
    timeout: 20_000,
    env: { PATH: process.env.PATH ?? '', ...env },
  });
  assert.is(r.status, 0, r.stderr);
  const replies = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(replies, [
    { jsonrpc: '2.0', id: 1, result: { protocolVersion: '0.3.0', agentInfo: { name: 'minimal-bot', version: '0.1.0' }, conformanceLevel: 'level-1', capabilities: {} } },
    { jsonrpc: '2.0', id: 2, result: { state: 'READY', uptime_ms: replies[1].result.uptime_ms } },
    { jsonrpc: '2.0', id: 3, result: { drained: true } },
  ]);
  // stderr stays JSON lines only, whatever happened to the cache.
  for (const line of r.stderr.split('\n').filter(Boolean)) assert.ok(JSON.parse(line).msg, line);
  return r;
}

const files = (dir: string) => readdirSync(dir).filter((n) => n.endsWith('.v8cache'));
const bundleId = () => /\/\*claw-hot ([0-9a-f]{16})\n/.exec(readFileSync(CLAW, 'latin1'))?.[1];

test('the bundle is a code-cache build', () => {
  assert.ok(bundleId(), `${CLAW} has no claw-hot section (built with --no-code-cache?)`);
});

test('first start writes the cache, the second uses it; damaged, foreign and garbage files are replaced', () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-cc-e2e-'));
  try {
    const cache = join(dir, 'cache');
    // The very first start with a manifest writes its manifest record and no code cache (it ran the YAML and
    // schema code later starts skip, docs/startup.md); the second writes the code cache.
    run({ CLAW_CACHE_DIR: cache });
    assert.equal(files(cache), []);
    const records = readdirSync(cache).filter((n) => n.endsWith('.json'));
    assert.equal(records.map((n) => n.replace(/-manifest-[0-9a-f]{8}\.json$/, '')), [bundleId()], 'one manifest record');
    run({ CLAW_CACHE_DIR: cache });
    const [name] = files(cache);
    assert.is(files(cache).length, 1);
    assert.match(name, new RegExp(`^${bundleId()}-run-${process.version.replace(/\./g, '\\.')}-${process.arch}-[0-9a-f]{8}\\.v8cache$`));
    const file = join(cache, name);
    const first = statSync(file);
    const good = readFileSync(file);
    if (typeof process.getuid === 'function') {
      assert.is(first.mode & 0o777, 0o600);
      assert.is(statSync(cache).mode & 0o777, 0o700);
    }

    // Used: an accepted cache is not written again.
    run({ CLAW_CACHE_DIR: cache });
    const second = statSync(file);
    assert.is(second.ino, first.ino);
    assert.is(second.mtimeMs, first.mtimeMs);
    assert.equal(readdirSync(cache).sort(), [...records, name].sort());

    // Damaged inside V8's data (V8 itself would crash on this one), a V8 cache of some other script (V8 rejects
    // it), garbage: each run still answers, and leaves a good file behind.
    const half = (good.length - 16) / 2;
    const damaged = Buffer.from(good);
    damaged[16 + (half >> 1)] ^= 0xff;
    const foreign = Buffer.from(good);
    // A well-formed file whose V8 data belongs to another source: both copies changed alike in V8's header.
    for (const at of [16 + 8, 16 + half + 8]) foreign[at] ^= 0x55;
    for (const [what, content] of [['damaged', damaged], ['foreign', foreign], ['garbage', Buffer.alloc(good.length, 0x2a)]] as const) {
      writeFileSync(file, content);
      chmodSync(file, 0o600);
      run({ CLAW_CACHE_DIR: cache });
      const now = readFileSync(file);
      assert.not.equal(Buffer.compare(now, content), 0, `${what}: replaced`);
      assert.is(now.toString('latin1', 0, 8), 'CLAWCC02', `${what}: a cache file again`);
      assert.equal(readdirSync(cache).sort(), [...records, name].sort(), `${what}: no temporary file left`);
    }
    // The replacement is used in turn.
    const again = statSync(file);
    run({ CLAW_CACHE_DIR: cache });
    assert.is(statSync(file).mtimeMs, again.mtimeMs);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('one cache per command; none for flags, none when turned off', () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-cc-e2e-'));
  try {
    const cache = join(dir, 'cache');
    run({ CLAW_CACHE_DIR: cache }); // the manifest record (no code cache from a first start, see above)
    run({ CLAW_CACHE_DIR: cache });
    const v = spawnSync(process.execPath, [CLAW, 'validate', 'examples/minimal/claw.yaml'], { cwd: ROOT, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', CLAW_CACHE_DIR: cache } });
    assert.is(v.status, 0, v.stderr);
    const ver = spawnSync(process.execPath, [CLAW, '--version'], { cwd: ROOT, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', CLAW_CACHE_DIR: cache } });
    assert.is(ver.status, 0);
    assert.equal(files(cache).map((n) => n.split('-')[1]).sort(), ['run', 'validate']);
    // An invalid manifest (exit 1) leaves no cache: a failed start never becomes the cache.
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'kind: Claw\n');
    const b = spawnSync(process.execPath, [CLAW, 'validate', bad], { cwd: ROOT, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', CLAW_CACHE_DIR: join(dir, 'c2') } });
    assert.is(b.status, 1);
    assert.equal(readdirSync(dir).includes('c2') ? files(join(dir, 'c2')) : [], []);
    // CLAW_CODE_CACHE=0: nothing read, nothing written.
    run({ CLAW_CACHE_DIR: join(dir, 'off'), CLAW_CODE_CACHE: '0' });
    assert.not.ok(readdirSync(dir).includes('off'));
    // Default place: $XDG_CACHE_HOME/claw-edge, else $HOME/.cache/claw-edge; nothing for a HOME that does not exist.
    run({ XDG_CACHE_HOME: join(dir, 'xdg'), HOME: join(dir, 'home') });
    run({ XDG_CACHE_HOME: join(dir, 'xdg'), HOME: join(dir, 'home') });
    assert.is(files(join(dir, 'xdg', 'claw-edge')).length, 1);
    run({ HOME: join(dir, 'home') });
    assert.not.ok(readdirSync(dir).includes('home'));
    mkdirSync(join(dir, 'home'));
    run({ HOME: join(dir, 'home') });
    run({ HOME: join(dir, 'home') });
    assert.is(files(join(dir, 'home', '.cache', 'claw-edge')).length, 1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the loader takes the hot code from its own source text, and still runs where that text is not exact', () => {
  // The shipped loader slices the hot code (and cold groups) out of __CLAW_HOT__'s source text. A copy whose
  // recorded offset of that function is wrong stands for an engine whose Function.prototype.toString is not the
  // exact text: the loader must notice (the build id is not where it expects it) and read the file instead.
  const text = readFileSync(CLAW, 'latin1');
  const m = /fn:( *)(\d+),/.exec(text);
  assert.ok(m, 'the loader records the offset of __CLAW_HOT__');
  assert.ok(text.startsWith('function __CLAW_HOT__(){/*claw-hot ', Number(m![2])), 'the offset points at the function');
  const dir = mkdtempSync(join(tmpdir(), 'claw-cc-fallback-'));
  try {
    const wrong = String(Number(m![2]) + 7).padStart(m![1].length + m![2].length);
    const copy = join(dir, 'claw.mjs');
    writeFileSync(copy, text.replace(m![0], `fn:${wrong},`), 'latin1');
    const r = spawnSync(process.execPath, [copy, 'run', 'examples/minimal/claw.yaml'], {
      cwd: ROOT,
      input: session,
      encoding: 'utf8',
      timeout: 20_000,
      env: { PATH: process.env.PATH ?? '', CLAW_CACHE_DIR: join(dir, 'cache') },
    });
    assert.is(r.status, 0, r.stderr);
    assert.is(r.stdout.trim().split('\n').length, 3);
    assert.equal(JSON.parse(r.stdout.split('\n')[0]).result.agentInfo, { name: 'minimal-bot', version: '0.1.0' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an unusable cache directory never fails a run', () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-cc-e2e-'));
  try {
    const plain = join(dir, 'a-file');
    writeFileSync(plain, 'not a directory');
    run({ CLAW_CACHE_DIR: join(plain, 'cache') });
    run({ CLAW_CACHE_DIR: join(plain, 'cache') });
    if (process.getuid?.() !== 0) {
      const ro = join(dir, 'ro');
      mkdirSync(ro);
      chmodSync(ro, 0o555);
      run({ CLAW_CACHE_DIR: ro });
      assert.equal(readdirSync(ro), []);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
