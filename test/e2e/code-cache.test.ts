// The shipped runtime's V8 code caches (docs/startup.md), end to end: the first `claw run` leaves a cache for
// every chunk file it compiled, the next uses them (and so does not rewrite them), a foreign or garbage file is
// rejected by V8 and replaced, an unusable cache directory never fails a run, and the replies are the same in
// every case. A file damaged on disk behind an intact header (bit flips on a board's SD card) is rejected by V8's
// checksum, on every Node the project supports, instead of crashing V8 at every start.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, chmodSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { CLAW, ROOT, initParams } from './helpers/claw-process.ts';
import { manifest } from './helpers/l2-agent.ts';

const session = readFileSync(join(ROOT, 'examples/minimal/session.ndjson'), 'utf8');

function run(env: Record<string, string>, args = ['run', 'examples/minimal/claw.yaml'], node = process.execPath) {
  const r = spawnSync(node, [CLAW, ...args], {
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
const chunkFiles = () => readdirSync(join(CLAW, '..', 'chunks'));
const hotFile = () => chunkFiles().find((n) => n.startsWith('claw-'))!;

test('dist/ holds the loader and the chunk files', () => {
  assert.ok(hotFile(), 'dist/chunks/claw-<hash>.js, the start-up file');
  assert.ok(statSync(CLAW).size < 16 * 1024, 'the loader is small');
});

test('first start writes the cache, the second uses it; foreign and garbage files are replaced', () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-cc-e2e-'));
  try {
    const cache = join(dir, 'cache');
    run({ CLAW_CACHE_DIR: cache });
    const [name] = files(cache);
    assert.is(files(cache).length, 1, 'a Level 1 start compiles the start-up file only');
    assert.match(name, new RegExp(`^${hotFile().replace('.js', '')}-run-${process.version.replace(/\./g, '\\.')}-${process.arch}-[0-9a-f]{8}\\.v8cache$`));
    const file = join(cache, name);
    const first = statSync(file);
    if (typeof process.getuid === 'function') {
      assert.is(first.mode & 0o777, 0o600);
      assert.is(statSync(cache).mode & 0o777, 0o700);
    }

    // Used: an accepted cache is not written again.
    run({ CLAW_CACHE_DIR: cache });
    const second = statSync(file);
    assert.is(second.ino, first.ino);
    assert.is(second.mtimeMs, first.mtimeMs);
    assert.equal(readdirSync(cache), [name]);

    // A V8 cache of another script (V8 rejects it: cachedDataRejected), garbage: each run still answers, and
    // leaves a good file behind.
    const foreign = spawnSync(process.execPath, ['-e', 'process.stdout.write(new (require("vm").Script)("1+1").createCachedData())']).stdout;
    for (const [what, content] of [['foreign', foreign], ['garbage', Buffer.alloc(first.size, 0x2a)]] as const) {
      writeFileSync(file, content);
      chmodSync(file, 0o600);
      run({ CLAW_CACHE_DIR: cache });
      const now = readFileSync(file);
      assert.not.equal(Buffer.compare(now, content), 0, `${what}: replaced`);
      assert.equal(readdirSync(cache), [name], `${what}: no temporary file left`);
    }
    // The replacement is used in turn.
    const again = statSync(file);
    run({ CLAW_CACHE_DIR: cache });
    assert.is(statSync(file).mtimeMs, again.mtimeMs);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a Level 2 session leaves a cache for every chunk file it compiled, and the next start writes none', () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-cc-l2-'));
  try {
    writeFileSync(join(dir, 'claw.yaml'), manifest({}));
    const cache = join(dir, 'cache');
    const input = [
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'claw.initialize', params: initParams() }),
      JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'claw.tool.call', params: { name: 'echo', arguments: { text: 'x' }, context: { request_id: 'r2', identity: 'standard-agent' } } }),
      JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'claw.shutdown', params: { reason: 'test', timeout_ms: 1000 } }),
    ].join('\n') + '\n';
    const l2 = () => {
      const r = spawnSync(process.execPath, [CLAW, 'run', join(dir, 'claw.yaml')], { cwd: dir, input, encoding: 'utf8', timeout: 20_000, env: { PATH: process.env.PATH ?? '', CLAW_CACHE_DIR: cache } });
      assert.is(r.status, 0, r.stderr);
      assert.ok(r.stdout.includes('"id":2,"result"'), r.stdout);
    };
    l2();
    const written = files(cache);
    assert.ok(written.length > 1, `the start-up file and the tools chunks: ${written}`);
    const chunks = new Set(chunkFiles().map((n) => n.replace(/\.js$/, '')));
    for (const n of written) assert.ok(chunks.has(n.replace(/-run-.*$/, '')), `${n} belongs to a chunk file of this build`);
    const times = written.map((n) => statSync(join(cache, n)).mtimeMs);
    l2();
    assert.equal(files(cache), written);
    assert.equal(written.map((n) => statSync(join(cache, n)).mtimeMs), times, 'every cache was accepted');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('one cache per command; none for flags, none when turned off', () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-cc-e2e-'));
  try {
    const cache = join(dir, 'cache');
    run({ CLAW_CACHE_DIR: cache });
    const v = spawnSync(process.execPath, [CLAW, 'validate', 'examples/minimal/claw.yaml'], { cwd: ROOT, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', CLAW_CACHE_DIR: cache } });
    assert.is(v.status, 0, v.stderr);
    const ver = spawnSync(process.execPath, [CLAW, '--version'], { cwd: ROOT, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', CLAW_CACHE_DIR: cache } });
    assert.is(ver.status, 0);
    assert.equal(files(cache).map((n) => n.split('-')[2]).sort(), ['run', 'validate']);
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
    assert.is(files(join(dir, 'xdg', 'claw-edge')).length, 1);
    run({ HOME: join(dir, 'home') });
    assert.not.ok(readdirSync(dir).includes('home'));
    mkdirSync(join(dir, 'home'));
    run({ HOME: join(dir, 'home') });
    assert.is(files(join(dir, 'home', '.cache', 'claw-edge')).length, 1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Every 256th byte past V8's header gets one bit flipped: what a worn SD card does to a file at rest. */
function flipBits(file: string): Buffer {
  const b = readFileSync(file);
  for (let i = 64; i < b.length; i += 256) b[i] ^= 1 << (i % 8);
  writeFileSync(file, b);
  return b;
}

const NODES: [string, string][] = [
  ['node20', process.execPath],
  ['node18', join(ROOT, '.build/runtimes/node18/node_modules/.bin/node')],
  ['node22', join(ROOT, '.build/runtimes/node22/node_modules/.bin/node')],
];

for (const [label, node] of NODES) {
  (existsSync(node) ? test : test.skip)(`${label}: a cache damaged behind an intact header is rejected and rewritten, not a crash at every start`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'claw-cc-flip-'));
    try {
      const cache = join(dir, 'cache');
      run({ CLAW_CACHE_DIR: cache }, undefined, node);
      const [name] = files(cache);
      const file = join(cache, name);
      const damaged = flipBits(file);
      // Without V8's checksum (release builds write and check none) this start dies in deserialisation
      // (SIGTRAP, exit 133), and so does every later one.
      run({ CLAW_CACHE_DIR: cache }, undefined, node);
      assert.not.equal(Buffer.compare(readFileSync(file), damaged), 0, 'the damaged file was replaced');
      const good = statSync(file);
      run({ CLAW_CACHE_DIR: cache }, undefined, node);
      assert.is(statSync(file).mtimeMs, good.mtimeMs, 'the replacement is accepted in turn');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

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
