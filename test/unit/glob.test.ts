import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { expandGlob, GlobTooWide, isGlob } from '../../src/manifest/glob.ts';
import type { SourceReader } from '../../src/manifest/reader.ts';

/** An in-memory tree: file paths (absolute) → content. Directories are implied. */
function memReader(paths: string[]): SourceReader & { listed: string[] } {
  const files = new Set(paths);
  const listed: string[] = [];
  return {
    listed,
    async read(p) {
      if (!files.has(p)) throw Object.assign(new Error(`ENOENT ${p}`), { code: 'ENOENT' });
      return new TextEncoder().encode('x: 1');
    },
    async list(dir) {
      listed.push(dir);
      const prefix = dir === '/' ? '/' : `${dir}/`;
      const out = new Map<string, boolean>();
      for (const f of files) {
        if (!f.startsWith(prefix)) continue;
        const rest = f.slice(prefix.length).split('/');
        const isDir = rest.length > 1;
        out.set(rest[0], (out.get(rest[0]) ?? false) || isDir);
      }
      // Listing order deliberately not sorted (reverse insertion) to prove the output is sorted.
      return [...out].reverse().map(([name, d]) => ({ name, dir: d }));
    },
  };
}

const TREE = [
  '/w/claw.yaml',
  '/w/tools/b.yaml',
  '/w/tools/a.yaml',
  '/w/tools/c.yml',
  '/w/tools/ab.yaml',
  '/w/tools/.hidden.yaml',
  '/w/tools/nested/x.yaml',
  '/w/tools/nested/deeper/x.yaml',
  '/w/tools/nested/deeper/y.yaml',
  '/w/tools/.git/x.yaml',
  '/w/x.yaml',
  '/w/policies/p1.yaml',
  '/w/policies/p2.yaml',
  '/w/policies/pa.yaml',
];

test('isGlob', () => {
  for (const p of ['*.yaml', 'a/?.yaml', 'x/[ab].yaml', '**/x.yaml']) assert.ok(isGlob(p), p);
  for (const p of ['a.yaml', './tools/a.yaml', '../x.yaml']) assert.not.ok(isGlob(p), p);
});

test('*.yaml: files in one directory, sorted, hidden excluded, no subdirectories', async () => {
  const r = memReader(TREE);
  assert.equal(await expandGlob(r, '/w', 'tools/*.yaml'), ['/w/tools/a.yaml', '/w/tools/ab.yaml', '/w/tools/b.yaml']);
  assert.equal(await expandGlob(r, '/w', './tools/*.yaml'), ['/w/tools/a.yaml', '/w/tools/ab.yaml', '/w/tools/b.yaml']);
});

test('*: extension variants', async () => {
  const r = memReader(TREE);
  assert.equal(await expandGlob(r, '/w', 'tools/*.y*ml'), ['/w/tools/a.yaml', '/w/tools/ab.yaml', '/w/tools/b.yaml', '/w/tools/c.yml']);
});

test('?: exactly one character', async () => {
  const r = memReader(TREE);
  assert.equal(await expandGlob(r, '/w', 'tools/?.yaml'), ['/w/tools/a.yaml', '/w/tools/b.yaml']);
  assert.equal(await expandGlob(r, '/w', 'policies/p?.yaml'), ['/w/policies/p1.yaml', '/w/policies/p2.yaml', '/w/policies/pa.yaml']);
});

test('[ab], ranges and [!…] negation', async () => {
  const r = memReader(TREE);
  assert.equal(await expandGlob(r, '/w', 'tools/[ab].yaml'), ['/w/tools/a.yaml', '/w/tools/b.yaml']);
  assert.equal(await expandGlob(r, '/w', 'policies/p[0-9].yaml'), ['/w/policies/p1.yaml', '/w/policies/p2.yaml']);
  assert.equal(await expandGlob(r, '/w', 'policies/p[!0-9].yaml'), ['/w/policies/pa.yaml']);
});

test('regex metacharacters in a pattern are literal', async () => {
  const r = memReader(['/w/a+b.yaml', '/w/aab.yaml', '/w/a(1).yaml', '/w/a1.yaml']);
  assert.equal(await expandGlob(r, '/w', 'a+b.*'), ['/w/a+b.yaml']);
  assert.equal(await expandGlob(r, '/w', 'a(1).*'), ['/w/a(1).yaml']);
});

test('hidden files: only a pattern starting with a dot matches them', async () => {
  const r = memReader(TREE);
  assert.equal(await expandGlob(r, '/w', 'tools/.*.yaml'), ['/w/tools/.hidden.yaml']);
  assert.not.ok((await expandGlob(r, '/w', 'tools/?hidden.yaml')).length);
});

test('**/x.yaml: any depth including the base, hidden directories skipped, sorted', async () => {
  const r = memReader(TREE);
  assert.equal(await expandGlob(r, '/w', '**/x.yaml'), ['/w/tools/nested/deeper/x.yaml', '/w/tools/nested/x.yaml', '/w/x.yaml']);
});

test('**/*.yaml under a directory', async () => {
  const r = memReader(TREE);
  assert.equal(await expandGlob(r, '/w', 'tools/nested/**/*.yaml'), [
    '/w/tools/nested/deeper/x.yaml',
    '/w/tools/nested/deeper/y.yaml',
    '/w/tools/nested/x.yaml',
  ]);
});

test('a literal segment after a wildcard only matches existing files', async () => {
  const r = memReader(TREE);
  assert.equal(await expandGlob(r, '/w', 'tools/*/x.yaml'), ['/w/tools/nested/x.yaml']);
  assert.equal(await expandGlob(r, '/w', '*/y.yaml'), []);
});

test('no match → []', async () => {
  const r = memReader(TREE);
  assert.equal(await expandGlob(r, '/w', 'tools/*.json'), []);
  assert.equal(await expandGlob(r, '/w', 'nowhere/*.yaml'), []);
  assert.equal(await expandGlob(r, '/w', '**/nothing.yaml'), []);
  assert.equal(await expandGlob(memReader([]), '/w', '*.yaml'), []);
});

test('absolute patterns and .. are normalized', async () => {
  const r = memReader(TREE);
  assert.equal(await expandGlob(r, '/elsewhere', '/w/policies/p?.yaml'), ['/w/policies/p1.yaml', '/w/policies/p2.yaml', '/w/policies/pa.yaml']);
  assert.equal(await expandGlob(r, '/w/tools', '../policies/p[12].yaml'), ['/w/policies/p1.yaml', '/w/policies/p2.yaml']);
});

test('results are unique', async () => {
  const r = memReader(TREE);
  const out = await expandGlob(r, '/w', 'tools/**/**/?.yaml');
  assert.equal(out, [...new Set(out)]);
  assert.equal(out, ['/w/tools/a.yaml', '/w/tools/b.yaml', '/w/tools/nested/deeper/x.yaml', '/w/tools/nested/deeper/y.yaml', '/w/tools/nested/x.yaml']);
});

test('a ** walk over more directories than the limit stops with GlobTooWide instead of walking on', async () => {
  const wide = memReader(Array.from({ length: 50 }, (_, i) => `/w/d${i}/sub/x.yaml`));
  assert.is((await expandGlob(wide, '/w', '**/x.yaml')).length, 50);
  const before = wide.listed.length;
  let thrown: unknown;
  try {
    await expandGlob(wide, '/w', '**/x.yaml', 20);
  } catch (e) {
    thrown = e;
  }
  assert.instance(thrown, GlobTooWide);
  assert.is((thrown as GlobTooWide).code, 'glob-too-wide');
  assert.is(wide.listed.length - before, 20, 'no directory listed past the limit');
});

test.run();
