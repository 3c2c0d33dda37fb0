// scripts/check-layers.mjs (docs/testing.md "Layers") on a tiny tree held in memory: what the scanner reads as an
// import, which edges the table refuses, exceptions, and cycles of value imports.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

// scripts/test.mjs runs uvu from the repository root.
const ROOT = process.cwd();

type Imp = { spec: string; typeOnly: boolean; dynamic: boolean };
type Exception = { from: string; to: string; why: string };
interface Checker {
  scanImports(text: string): Imp[];
  layerOf(path: string, layers?: Record<string, string[]>): string | undefined;
  checkLayers(o: {
    root: string;
    layers?: Record<string, string[]>;
    allowed?: Record<string, string[]>;
    exceptions?: Exception[];
    envExceptions?: { from: string; why: string }[];
    files?: string[];
    read?: (file: string) => string;
  }): { problems: string[]; unused: Exception[]; files: number };
  LAYERS: Record<string, string[]>;
  ALLOWED: Record<string, string[]>;
}
const load = async (): Promise<Checker> => (await import(pathToFileURL(join(ROOT, 'scripts/check-layers.mjs')).href)) as Checker;

const LAYERS = { protocol: ['src/protocol/'], manifest: ['src/manifest/'], kernel: ['src/kernel/'], sandbox: ['src/sandbox/'], tools: ['src/tools/'] };
const ALLOWED = { protocol: [], manifest: ['protocol'], kernel: ['protocol', 'manifest'], sandbox: ['protocol', 'manifest', 'kernel'], tools: ['protocol', 'manifest', 'kernel'] };

function tree(files: Record<string, string>, exceptions: Exception[] = [], envExceptions: { from: string; why: string }[] = []) {
  return { root: '/fixture', layers: LAYERS, allowed: ALLOWED, exceptions, envExceptions, files: Object.keys(files), read: (f: string) => files[f] };
}

test('the scanner reads import, export-from, type-only and import(); not comments, strings or packages', async () => {
  const { scanImports } = await load();
  const text = [
    "import { a } from './a.ts';",
    "import type { B } from '../b.ts';",
    'import {',
    '  type C,',
    '  type D,',
    "} from './cd.ts';",
    "import { type E, f } from './ef.ts';",
    "export { g } from './g.ts';",
    "export * from './star.ts';",
    "import './side-effect.ts';",
    "import { h } from 'valibot';",
    "const lazy = () => import('./lazy.ts');",
    "// import { x } from './commented.ts';",
    ' * const y = await import(\'./in-doc-comment.ts\');',
    "const s = \"import { z } from './in-string.ts'\";",
    "export const k = fn('from', './not-an-import.ts');",
  ].join('\n');
  assert.equal(scanImports(text), [
    { spec: './a.ts', typeOnly: false, dynamic: false },
    { spec: '../b.ts', typeOnly: true, dynamic: false },
    { spec: './cd.ts', typeOnly: true, dynamic: false },
    { spec: './ef.ts', typeOnly: false, dynamic: false },
    { spec: './g.ts', typeOnly: false, dynamic: false },
    { spec: './star.ts', typeOnly: false, dynamic: false },
    { spec: './side-effect.ts', typeOnly: false, dynamic: false },
    { spec: './lazy.ts', typeOnly: false, dynamic: true },
  ]);
});

test('an import against the table is printed as file → import (layer → layer); allowed ones are not', async () => {
  const { checkLayers } = await load();
  const r = checkLayers(
    tree({
      'src/protocol/errors.ts': 'export class E {}',
      'src/manifest/check.ts': "import { E } from '../protocol/errors.ts';\nimport { rules } from '../sandbox/rules.ts';",
      'src/kernel/router.ts': "import type { T } from '../tools/types.ts';\nimport { E } from '../protocol/errors.ts';",
      'src/sandbox/rules.ts': "export const rules = 1;\nimport type { T } from '../tools/types.ts';",
      'src/tools/types.ts': "import { rules } from '../sandbox/rules.ts';\nexport type T = 1;",
    }),
  );
  assert.equal(r.problems, [
    'src/kernel/router.ts → ../tools/types.ts (kernel → tools)',
    'src/manifest/check.ts → ../sandbox/rules.ts (manifest → sandbox)',
    'src/sandbox/rules.ts → ../tools/types.ts (sandbox → tools)',
    'src/tools/types.ts → ../sandbox/rules.ts (tools → sandbox)',
  ]);
  assert.is(r.files, 5);
});

test('an exception allows exactly its edge, and one that nothing uses is reported', async () => {
  const { checkLayers } = await load();
  const used = { from: 'src/tools/', to: 'src/sandbox/rules.ts', why: 'tools run in the sandbox' };
  const stale = { from: 'src/kernel/', to: 'src/tools/', why: 'no longer needed' };
  const r = checkLayers(
    tree(
      {
        'src/sandbox/rules.ts': 'export const rules = 1;',
        'src/sandbox/other.ts': 'export const other = 1;',
        'src/tools/run.ts': "import { rules } from '../sandbox/rules.ts';\nimport { other } from '../sandbox/other.ts';",
      },
      [used, stale],
    ),
  );
  assert.equal(r.problems, ['src/tools/run.ts → ../sandbox/other.ts (tools → sandbox)']);
  assert.equal(r.unused, [stale]);
});

test('only the host reads process.env: an adapter that does is a problem, unless an exception names the file', async () => {
  const { checkLayers } = await load();
  const LAYERS_ENV = { ...LAYERS, host: ['src/node/'] };
  const files: Record<string, string> = {
    'src/node/env.ts': 'export const env = process.env;',
    'src/tools/token.ts': "// process.env is not read here, only mentioned\nexport const token = (e: Record<string, string>) => e.TOKEN ?? process.env.TOKEN;",
    'src/tools/shell.ts': 'export const path = () => process.env.PATH;',
    'src/sandbox/doc.ts': ' * never process.env: the host passes it\nexport const x = 1;',
  };
  const r = checkLayers({ ...tree(files, [], [{ from: 'src/tools/shell.ts', why: 'the worker process' }]), layers: LAYERS_ENV, allowed: { ...ALLOWED, host: ['protocol'] } });
  assert.equal(r.problems, ['src/tools/token.ts: reads process.env (only the host does: take the environment from it)']);
  assert.equal(r.unused, []);
});

test('a cycle of value imports is refused; type-only and import() edges do not make one', async () => {
  const { checkLayers } = await load();
  const r = checkLayers(
    tree({
      'src/kernel/agent.ts': "import { CORE } from './methods/index.ts';\nexport const LIMIT = 1;",
      'src/kernel/methods/index.ts': "import { stop } from './stop.ts';\nexport const CORE = [stop];",
      'src/kernel/methods/stop.ts': "import { LIMIT } from '../agent.ts';\nexport const stop = LIMIT;",
      'src/kernel/a.ts': "import type { B } from './b.ts';\nexport type A = 1;",
      'src/kernel/b.ts': "import type { A } from './a.ts';\nexport const b = () => import('./c.ts');",
      'src/kernel/c.ts': "import { b } from './b.ts';",
    }),
  );
  assert.equal(r.problems, ['cycle of value imports: src/kernel/agent.ts → src/kernel/methods/index.ts → src/kernel/methods/stop.ts → src/kernel/agent.ts']);
});

test('a file in no layer, or an import that leaves every layer, is a problem', async () => {
  const { checkLayers } = await load();
  const r = checkLayers(tree({ 'src/newdir/x.ts': '', 'src/kernel/k.ts': "import { x } from '../../scripts/x.mjs';" }));
  assert.equal(r.problems, ['src/kernel/k.ts → ../../scripts/x.mjs (kernel → outside every layer)', 'src/newdir/x.ts: in no layer (add its folder to LAYERS in scripts/check-layers.mjs)']);
});

test('every layer of the real table has a row of allowed imports, and the longest prefix wins', async () => {
  const { LAYERS: real, ALLOWED: allowed, layerOf } = await load();
  for (const l of Object.keys(real)) assert.ok(Array.isArray(allowed[l]), `ALLOWED has no row for ${l}`);
  for (const row of Object.values(allowed)) for (const l of row) assert.ok(real[l], `ALLOWED names an unknown layer ${l}`);
  assert.is(layerOf('src/log/logger.ts'), 'host');
  assert.is(layerOf('src/log/redactor.ts'), 'log');
  assert.is(layerOf('src/kernel/methods/status.ts'), 'kernel');
});

test.run();
