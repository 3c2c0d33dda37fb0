// The sandbox probes kept between starts (src/sandbox/probe-cache.ts): a second start spawns no probe; a changed
// binary, kernel setting, an old entry, a damaged record or a foreign cache file re-probes; a timed-out probe is
// not kept.
// A fake `prlimit` first on PATH counts its own runs.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { appendFileSync, chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { probeHost } from '../../src/sandbox/host.ts';
import { PROBE_CACHE_FILE, PROBE_CACHE_MAX_AGE_MS, cachedProbe, probeFingerprint } from '../../src/sandbox/probe-cache.ts';

const dir = mkdtempSync(join(tmpdir(), 'claw-probe-cache-'));
const bin = join(dir, 'bin');
const cache = join(dir, 'cache');
const counter = join(dir, 'runs');
const fake = join(bin, 'prlimit');
// The host's PATH as probeHost takes it, with the fake prlimit first.
const path = `${bin}:${process.env.PATH ?? ''}`;

test.before(() => {
  mkdirSync(bin, { recursive: true });
  writeFileSync(fake, `#!/bin/sh\necho "$*" >> ${counter}\nexit 0\n`);
  chmodSync(fake, 0o755);
});
test.after(() => {
  rmSync(dir, { recursive: true, force: true });
});

const runs = () => (existsSync(counter) ? readFileSync(counter, 'utf8').trim().split('\n').length : 0);

if (process.platform === 'linux') {
  test('a second probe with the cache spawns nothing; the answer is the same', async () => {
    const first = await probeHost({ cacheDir: cache, path });
    assert.is(first.prlimit.path, fake);
    assert.is(first.prlimit.works, true);
    assert.is(runs(), 2, 'the probe and --version');
    assert.ok(existsSync(join(cache, PROBE_CACHE_FILE)));
    const second = await probeHost({ cacheDir: cache, path });
    assert.is(runs(), 2, 'answered from the cache');
    assert.equal({ ...second, environ: undefined, cgroup: undefined }, { ...first, environ: undefined, cgroup: undefined });
  });

  test('a changed binary (size, mtime) is probed again', async () => {
    const before = runs();
    appendFileSync(fake, '# changed\n');
    await probeHost({ cacheDir: cache, path });
    assert.is(runs(), before + 2);
    await probeHost({ cacheDir: cache, path });
    assert.is(runs(), before + 2, 'and the new answer is kept');
  });

  test('an entry older than a day is probed again; no cache dir probes every time', async () => {
    const before = runs();
    await probeHost({ cacheDir: cache, path, now: Date.now() + PROBE_CACHE_MAX_AGE_MS + 1 });
    assert.is(runs(), before + 2);
    await probeHost({ path });
    assert.is(runs(), before + 4);
  });
}

test('the fingerprint names each binary (path, size, mtime, inode), the kernel, the uid and the userns settings', () => {
  const base = { binaries: { bwrap: '/usr/bin/bwrap', prlimit: undefined }, kernel: '6.1.0', uid: 1000, stat: () => ({ size: 10, mtimeMs: 5, ino: 7 }), readSetting: () => '1' };
  const k = probeFingerprint(base);
  assert.is(probeFingerprint({ ...base }), k);
  assert.is.not(probeFingerprint({ ...base, stat: () => ({ size: 11, mtimeMs: 5, ino: 7 }) }), k);
  assert.is.not(probeFingerprint({ ...base, stat: () => ({ size: 10, mtimeMs: 6, ino: 7 }) }), k);
  assert.is.not(probeFingerprint({ ...base, stat: () => ({ size: 10, mtimeMs: 5, ino: 8 }) }), k);
  assert.is.not(probeFingerprint({ ...base, binaries: { bwrap: '/opt/bwrap', prlimit: undefined } }), k);
  assert.is.not(probeFingerprint({ ...base, kernel: '6.1.1' }), k);
  assert.is.not(probeFingerprint({ ...base, uid: 0 }), k);
  assert.is.not(probeFingerprint({ ...base, readSetting: () => '0' }), k);
});

test('a result marked not storable (a probe timed out) is not kept', async () => {
  const d = join(dir, 'cache-timeout');
  let n = 0;
  const probe = async () => ({ n: ++n, timedOut: true });
  const o = { dir: d, fingerprint: 'k', now: Date.now(), storable: (r: { timedOut: boolean }) => !r.timedOut };
  await cachedProbe(o, probe);
  await cachedProbe(o, probe);
  assert.is(n, 2);
});

test('a record damaged on disk (still valid JSON, another shape or another path) is a miss: probed again and rewritten', async () => {
  const d = join(dir, 'cache-flipped');
  let n = 0;
  const o = { dir: d, fingerprint: 'k', now: Date.now(), storable: () => true };
  const probe = async () => ({ bwrap: { works: true, path: '/usr/bin/bwrap' }, n: ++n });
  await cachedProbe(o, probe);
  const file = join(d, PROBE_CACHE_FILE);
  const good = readFileSync(file, 'utf8');
  assert.equal(await cachedProbe(o, probe), { bwrap: { works: true, path: '/usr/bin/bwrap' }, n: 1 }, 'an intact record is used');
  // One byte each, as a flipped bit would: a key renamed (the reader would find no `bwrap`), a path changed.
  for (const [from, to] of [['"bwrap"', '"bwsap"'], ['/usr/bin/bwrap', '/usr/bin/bwrbp']]) {
    writeFileSync(file, good.replace(from, to), { mode: 0o600 });
    const before = n;
    const r = (await cachedProbe(o, probe)) as { n: number };
    assert.is(r.n, before + 1, `${to}: probed again`);
    assert.equal(await cachedProbe(o, probe), r, `${to}: and the fresh answer kept`);
  }
});

test('a cache file writable by others is ignored', async () => {
  const d = join(dir, 'cache-foreign');
  let n = 0;
  const o = { dir: d, fingerprint: 'k', now: Date.now(), storable: () => true };
  await cachedProbe(o, async () => ({ n: ++n }));
  chmodSync(join(d, PROBE_CACHE_FILE), 0o666);
  assert.equal(await cachedProbe(o, async () => ({ n: ++n })), { n: 2 });
});

test.run();
