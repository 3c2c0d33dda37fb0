// The launch manifest cache of the shipped bundle (src/manifest/load-cache.ts, docs/startup.md), end to end:
// every start answers from the manifest as it is on disk now — an edit between two starts is honoured, an edit
// that makes it invalid fails the start with the usual error, and going back to a valid file works again.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { CLAW, ROOT } from './helpers/claw-process.ts';

const INIT = readFileSync(join(ROOT, 'examples/minimal/session.ndjson'), 'utf8').split('\n')[0] + '\n';
const MANIFEST = readFileSync(join(ROOT, 'examples/minimal/claw.yaml'), 'utf8');

function start(file: string, cache: string) {
  return spawnSync(process.execPath, [CLAW, 'run', file], {
    cwd: ROOT,
    input: INIT,
    encoding: 'utf8',
    timeout: 20_000,
    env: { PATH: process.env.PATH ?? '', CLAW_CACHE_DIR: cache },
  });
}

const versionOf = (r: ReturnType<typeof start>) => {
  assert.is(r.status, 0, r.stderr);
  return JSON.parse(r.stdout.split('\n')[0]).result.agentInfo.version;
};

test('edits between starts are honoured; an invalid edit fails the start; a valid file works again', () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-mcache-e2e-'));
  try {
    const file = join(dir, 'claw.yaml');
    const cache = join(dir, 'cache');
    assert.match(MANIFEST, /version: "0\.1\.0"/);
    writeFileSync(file, MANIFEST);
    assert.is(versionOf(start(file, cache)), '0.1.0');
    assert.is(readdirSync(cache).filter((n) => n.includes('-manifest-')).length, 1, 'a record was kept');
    assert.is(versionOf(start(file, cache)), '0.1.0', 'from the record');

    writeFileSync(file, MANIFEST.replace('version: "0.1.0"', 'version: "0.2.0"'));
    assert.is(versionOf(start(file, cache)), '0.2.0', 'the edit is seen');
    assert.is(versionOf(start(file, cache)), '0.2.0');

    writeFileSync(file, MANIFEST.replace('claw: "0.3.0"', 'claw: "7.0.0"'));
    const bad = start(file, cache);
    assert.is(bad.status, 1);
    assert.is(bad.stdout, '');
    assert.match(bad.stderr, /manifest invalid/);
    assert.match(bad.stderr, /7\.0\.0/);

    writeFileSync(file, MANIFEST.replace('version: "0.1.0"', 'version: "0.2.0"'));
    assert.is(versionOf(start(file, cache)), '0.2.0');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the code cache: not from the very first start (it ran the YAML code), but from a manifest at a new path', () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-mcache-e2e-'));
  try {
    const cache = join(dir, 'cache');
    const codeCaches = () => readdirSync(cache).filter((n) => n.endsWith('.v8cache'));
    for (const sub of ['a', 'b']) {
      mkdirSync(join(dir, sub));
      writeFileSync(join(dir, sub, 'claw.yaml'), MANIFEST);
    }
    assert.is(versionOf(start(join(dir, 'a', 'claw.yaml'), cache)), '0.1.0');
    assert.equal(codeCaches(), [], "the build's first record: no code cache from this start");
    // A supervisor that writes its manifest to a new place on every start still gets a code cache.
    assert.is(versionOf(start(join(dir, 'b', 'claw.yaml'), cache)), '0.1.0');
    assert.is(codeCaches().length, 1, 'another record of this build exists: this start leaves a code cache');
    assert.is(readdirSync(cache).filter((n) => n.includes('-manifest-')).length, 2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
