// The chunk build (scripts/build/chunks.mjs, docs/startup.md) on the shipped entry: code reached only through
// import() stays out of the start-up file, every source module is in exactly one chunk and every chunk in exactly
// one file (one copy of each module: instanceof and === hold across chunks), and no file generates code from
// strings (the runtime must work under --disallow-code-generation-from-strings).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = process.cwd();

interface Built {
  entry: string;
  fileOf: Record<string, string>;
  files: { file: string; chunks: string[]; inputs: Record<string, unknown> }[];
}

test('the shipped entry: capability groups out of the start-up file, one copy of every module, no code from strings', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-chunks-'));
  try {
    const config = (await import(pathToFileURL(join(ROOT, 'build.config.mjs')).href)) as { esbuildOptions(o?: object): object };
    const { buildChunks } = (await import(pathToFileURL(join(ROOT, 'scripts/build/chunks.mjs')).href)) as { buildChunks(base: object, o: { entry: string; outdir: string }): Promise<Built> };
    const r = await buildChunks({ ...config.esbuildOptions(), logLevel: 'error' }, { entry: 'targets/node.ts', outdir: dir });
    const start = r.files.find((f) => f.file === r.fileOf[r.entry])!;
    assert.ok(start.chunks.includes(r.entry));
    for (const lazy of ['src/runtime/tools-module.ts', 'src/memory/service.ts', 'src/provider/chain.ts', 'src/telemetry/open.ts', 'src/swarm/fs-bus.ts']) {
      assert.not.ok(lazy in start.inputs, `${lazy} is not in the start-up file`);
      assert.ok(r.files.some((f) => lazy in f.inputs), `${lazy} is in some file`);
    }
    for (const hot of ['src/cli/run.ts', 'src/manifest/loader.ts', 'src/protocol/errors.ts']) assert.ok(hot in start.inputs, hot);
    assert.not.ok(Object.keys(start.inputs).some((k) => k.includes('node_modules/mqtt') || k.includes('node_modules/sql.js')), 'mqtt and sql.js are lazy');
    const seen = new Map<string, string>();
    for (const f of r.files) {
      for (const k of Object.keys(f.inputs)) {
        assert.not.ok(seen.has(k), `${k} in ${f.file} and ${seen.get(k)}`);
        seen.set(k, f.file);
      }
      for (const c of f.chunks) assert.is(r.fileOf[c], f.file);
    }
    assert.equal(readdirSync(dir).sort(), r.files.map((f) => f.file).sort());
    for (const f of r.files) {
      const text = readFileSync(join(dir, f.file), 'utf8');
      assert.not.match(text, /\bnew Function\b|\beval\(/, `${f.file} generates code from strings`);
      assert.not.match(text, /\bimport\(/, `${f.file} still has an import()`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
