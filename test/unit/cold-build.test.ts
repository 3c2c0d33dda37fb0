// The cold-code build (scripts/build/cold.mjs, BENCH.md "Bundle: cold code") on a small fixture
// (test/fixtures/cold-build): code reachable only through import() is stored compressed, evaluated once on first
// use, after the hot code, and shares the hot modules (one class, one object: instanceof and === hold across the
// boundary); import.meta.url is the bundle's; a CommonJS dependency's require of a node built-in works; a
// cold-to-cold import() works; the graph split is exact.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { spawnSync } from 'node:child_process';
import { brotliDecompressSync } from 'node:zlib';

const ROOT = process.cwd();
const FIX = 'test/fixtures/cold-build';
const BASE = { bundle: true, minify: true, platform: 'node', format: 'esm', target: ['node18'], logLevel: 'error' };

interface Split {
  groups: { targets: string[]; modules: number; raw: number; compressed: number; base64: number; inputs: Record<string, unknown> }[];
  hotInputs: Record<string, unknown>;
  registry: string[];
}
const load = async () =>
  (await import(pathToFileURL(join(ROOT, 'scripts/build/cold.mjs')).href)) as { bundleCold(base: object, o: { entry: string; outfile: string }): Promise<Split> };

test('the fixture runs from one file with cold code evaluated once, sharing the hot modules', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-cold-'));
  try {
    const outfile = join(dir, 'out.mjs');
    const split = await (await load()).bundleCold(BASE, { entry: `${FIX}/entry.ts`, outfile });
    // One group: cold.ts with colder.ts and dep.cjs (reached from cold code only); shared.ts stays hot.
    assert.equal(split.groups.map((g) => [g.targets, g.modules]), [[[`${FIX}/cold.ts`], 3]]);
    assert.equal(split.registry, [`${FIX}/shared.ts`]);
    const text = readFileSync(outfile, 'utf8');
    assert.not.ok(text.includes('cold-module-text-never-in-clear'), 'cold code is not stored in clear');
    assert.is(text.split('hot-module-text-appears-once').length, 2, 'the hot module is in the hot part once');
    // The payload, decompressed, is the cold code, and carries no copy of the hot module.
    const payload = /\["([A-Za-z0-9+/=]+)"\]/.exec(text);
    assert.ok(payload, 'payload array found');
    const cold = brotliDecompressSync(Buffer.from(payload[1], 'base64')).toString('utf8');
    assert.ok(cold.includes('cold-module-text-never-in-clear'));
    assert.not.ok(cold.includes('hot-module-text-appears-once'));
    const r = spawnSync(process.execPath, [outfile], { encoding: 'utf8' });
    assert.is(r.stderr, '');
    assert.is(r.status, 0);
    assert.equal(JSON.parse(r.stdout), {
      before: 0,
      evaluated: 1,
      sameNamespace: true,
      instanceOfHot: true,
      sameMarker: true,
      defaultExport: 42,
      url: true,
      sep: '/',
      colder: 'colder',
      hot: 'hot-module-text-appears-once',
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the shipped entry: mqtt.js, sql.js glue, memory and the provider chain are cold; errors.ts is shared, not copied', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-cold-'));
  try {
    const { ALIASES } = (await import(pathToFileURL(join(ROOT, 'build.config.mjs')).href)) as { ALIASES: Record<string, string> };
    const split = await (await load()).bundleCold({ ...BASE, alias: ALIASES, define: { __CLAW_VERSION__: '"0"' } }, { entry: 'targets/node.ts', outfile: join(dir, 'claw.mjs') });
    const targets = split.groups.flatMap((g) => g.targets);
    // Cold = in some group and not in the hot code (a module imported from cold code is in its importer's
    // group rather than a target of its own: memory/service.ts since the modules became lazy, BENCH.md Round 4).
    const cold = new Set(split.groups.flatMap((g) => Object.keys(g.inputs)));
    for (const t of ['src/memory/service.ts', 'src/provider/chain.ts', 'src/transports/mqtt/client-mqtt.ts', 'src/telemetry/open.ts', 'src/runtime/tools-module.ts']) {
      assert.ok(cold.has(t) && !(t in split.hotInputs), t);
    }
    assert.ok(split.registry.includes('src/protocol/errors.ts'));
    // Groups are disjoint by construction; their targets are too.
    assert.is(new Set(targets).size, targets.length);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('cold code reading import.meta beyond .url fails the build instead of shipping {}', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-cold-'));
  try {
    let error: unknown;
    try {
      await (await load()).bundleCold(BASE, { entry: `${FIX}/meta-entry.ts`, outfile: join(dir, 'out.mjs') });
    } catch (e) {
      error = e;
    }
    assert.instance(error, Error);
    assert.match((error as Error).message, /^cold build: .*meta-cold\.ts: .*import\.meta.*only import\.meta\.url is passed to cold code/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
