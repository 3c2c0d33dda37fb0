// The manifest loader against fixture files: every valid fixture loads clean, every invalid one
// produces exactly the issues its `# expect:` lines declare (see test/fixtures/manifests/README.md).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadManifestFile, loadManifestValue, validateFile } from '../../src/manifest/loader.ts';
import { createFsReader } from '../../src/node/fs-reader.ts';
import type { ManifestIssue } from '../../src/manifest/issues.ts';

const FIX = join(process.cwd(), 'test/fixtures/manifests');
const reader = createFsReader();
const opts = { reader };

function roots(dir: string): string[] {
  return readdirSync(dir)
    .map((n) => join(dir, n))
    .flatMap((p) => (statSync(p).isDirectory() ? [join(p, 'claw.yaml')] : /\.(ya?ml|json)$/.test(p) ? [p] : []));
}

interface Expectation {
  path: string;
  rule: string;
  pos?: string;
  file: string;
}

function expectations(file: string): Expectation[] {
  const dir = file.slice(0, file.lastIndexOf('/'));
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('# expect: '))
    .map((l) => {
      const m = /^# expect: (\S+) (\S+)(?: @(\d+:\d+))?(?: in (\S+))?$/.exec(l);
      if (!m) throw new Error(`bad expect line in ${file}: ${l}`);
      return { path: m[1], rule: m[2], pos: m[3], file: m[4] ? join(dir, m[4]) : file };
    });
}

const show = (i: ManifestIssue) => `${i.file.replace(FIX + '/', '')} ${i.path} ${i.rule}`;

for (const file of roots(join(FIX, 'valid'))) {
  test(`valid: ${file.replace(FIX + '/', '')}`, async () => {
    const r = await validateFile(file, opts);
    assert.equal(r.issues.map(show), []);
    assert.is(r.kind, 'Claw');
  });
}

for (const file of roots(join(FIX, 'invalid'))) {
  test(`invalid: ${file.replace(FIX + '/', '')}`, async () => {
    const want = expectations(file);
    assert.ok(want.length > 0, 'fixture declares its expected issues');
    const r = await validateFile(file, opts);
    assert.equal(r.issues.map(show).sort(), want.map((w) => `${w.file.replace(FIX + '/', '')} ${w.path} ${w.rule}`).sort());
    for (const w of want.filter((x) => x.pos)) {
      const got = r.issues.find((i) => i.path === w.path && i.rule === w.rule)!;
      assert.is(`${got.pos?.line}:${got.pos?.col}`, w.pos, `position of ${w.path}`);
    }
    for (const i of r.issues) {
      assert.ok(i.message.length > 0, 'every issue has a message');
      if (i.rule === 'schema' || i.rule.startsWith('ref-')) assert.ok(i.section?.startsWith('§'), `section for ${i.path}`);
    }
  });
}

test('sourceKey: set for a self-contained file (the document as read, before defaults), never when a primitive came from another file', async () => {
  const single = join(process.cwd(), 'examples/minimal/claw.yaml');
  const r = await loadManifestFile(single, opts);
  assert.ok(r.manifest, JSON.stringify(r.issues));
  const { parseSource } = await import('../../src/manifest/source.ts');
  const src = parseSource(single, readFileSync(single));
  assert.ok(src.ok);
  if (src.ok) assert.is(r.manifest!.sourceKey, JSON.stringify(src.source.value));
  // The same document over the wire validates to the same manifest (what makes skipping it sound).
  const wire = await loadManifestValue(src.ok ? src.source.value : undefined, { file: '<initialize>', baseDir: '/', defaultClaw: '0.3.0' }, opts);
  assert.equal(wire.issues, []);
  const withoutPlaces = (x: unknown) => JSON.stringify(x, (k, v) => (k === 'origin' || k === 'file' || k === 'sourceKey' ? undefined : v));
  assert.is(withoutPlaces(wire.manifest), withoutPlaces(r.manifest));
  const multi = await loadManifestFile(join(FIX, 'valid/multi/claw.yaml'), opts);
  assert.ok(multi.manifest);
  assert.is(multi.manifest!.sourceKey, undefined);
});

test('names, versions and defaults of a multi-file manifest', async () => {
  const r = await loadManifestFile(join(FIX, 'valid/multi/claw.yaml'), opts);
  const m = r.manifest!;
  assert.ok(m, JSON.stringify(r.issues));
  assert.is(m.identity.name, 'multi-identity');
  // Glob results are sorted; the inline provider is index 1 of the providers array (profile §2).
  assert.equal(m.providers.map((p) => p.name), ['main', 'backup', 'provider-1']);
  // metadata.version inherits the Claw's unless the primitive has its own (spec §6.1).
  assert.equal(m.providers.map((p) => p.version), ['9.9.9', '2.1.0', '2.1.0']);
  assert.equal(m.tools.map((t) => t.name), ['echo', 'fetch', 'shell']);
  assert.is(m.tools[1].origin.file, join(FIX, 'valid/multi/tools/net/fetch.yaml'));
  // Runtime profile §1 defaults.
  assert.is(m.identity.spec.autonomy, 'supervised');
  assert.is(m.identity.spec.locale, 'en-US');
  assert.is(m.providers[0].spec.streaming, false);
  assert.is(m.channels[0].name, 'channel-0');
  assert.is(m.channels[0].spec.trigger.max_parallel, 1);
  assert.is(m.channels[0].spec.trigger.overlap_policy, 'skip');
  assert.is(m.sandbox!.name, 'box');
  assert.equal(m.policies.map((p) => p.name), ['base']);
});

test('inline identity takes the Claw name; explicit inline names win', async () => {
  const r = await loadManifestFile(join(FIX, 'valid/l2.yaml'), opts);
  const m = r.manifest!;
  assert.is(m.identity.name, 'standard-agent');
  assert.is(m.providers[0].name, 'provider-0');
  assert.is(m.tools[0].name, 'echo');
  assert.is(m.sandbox!.name, 'sandbox-0');
  assert.is(m.policies[0].name, 'policy-0');
  assert.is(m.identity.spec.autonomy, 'supervised');
  assert.is('name' in m.tools[0].spec, false, 'the inline name is metadata, not spec');
});

test('a manifest sent over the wire: claw defaults to the negotiated version', async () => {
  const value = JSON.parse(readFileSync(join(FIX, 'valid/minimal.json'), 'utf8'));
  delete value.claw;
  const r = await loadManifestValue(value, { file: '<initialize>', baseDir: FIX, defaultClaw: '0.2.0' }, opts);
  assert.equal(r.issues, []);
  assert.is(r.manifest!.generation, '0.2');
  assert.is(r.manifest!.claw, '0.2.0');
  // Without defaultClaw coverage: a wire manifest's issues carry no position.
  const bad = await loadManifestValue({ kind: 'Claw', metadata: { name: 'x' }, spec: {} }, { file: '<initialize>', baseDir: FIX, defaultClaw: '0.3.0' }, opts);
  assert.equal(bad.issues.map((i) => [i.file, i.path, i.rule, i.pos]), [
    ['<initialize>', 'spec.identity', 'schema', undefined],
    ['<initialize>', 'spec.providers', 'schema', undefined],
  ]);
});

function scratch(): string {
  return mkdtempSync(join(tmpdir(), 'claw-loader-'));
}

test('registry URIs resolve through file:// registries in order', async () => {
  const dir = scratch();
  mkdirSync(join(dir, 'reg2/acme/shell'), { recursive: true });
  writeFileSync(
    join(dir, 'reg2/acme/shell/1.0.0.yaml'),
    'claw: "0.3.0"\nkind: Tool\nmetadata: { name: "shell" }\nspec: { description: "Run", input_schema: { type: object } }\n',
  );
  const manifest = readFileSync(join(FIX, 'valid/minimal.yaml'), 'utf8') + '  tools:\n    - "claw://registry/acme/shell@1.0.0"\n';
  writeFileSync(join(dir, 'claw.yaml'), manifest);
  const registries = [
    { name: 'empty', url: `file://${dir}/reg1` },
    { name: 'acme', url: `file://${dir}/reg2` },
  ];
  const r = await loadManifestFile(join(dir, 'claw.yaml'), { reader, registries });
  assert.equal(r.issues, []);
  assert.is(r.manifest!.tools[0].name, 'shell');
  assert.is(r.manifest!.tools[0].origin.file, join(dir, 'reg2/acme/shell/1.0.0.yaml'));
  const miss = await loadManifestFile(join(dir, 'claw.yaml'), { reader, registries: registries.slice(0, 1) });
  assert.is(miss.issues.length, 1);
  assert.is(miss.issues[0].rule, 'registry');
  assert.match(miss.issues[0].message, 'was not found in any registry');
});

test('hostile files get one clear issue each, fast', async () => {
  const dir = scratch();
  const cases: [string, string | Uint8Array, string][] = [
    ['huge.yaml', 'a: "' + 'x'.repeat(50 * 1024 * 1024) + '"\n', 'file-too-large'],
    ['deep-flow.yaml', '['.repeat(100_000), 'too-deep'],
    ['deep-block.yaml', '- '.repeat(100_000) + 'x\n', 'too-deep'],
    ['deep-json.json', '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000), 'too-deep'],
    ['binary.yaml', new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 3, 0xff, 0xfe]), 'not-text'],
    ['latin1.yaml', new Uint8Array([0x61, 0x3a, 0x20, 0xe9, 0x0a]), 'not-text'],
    ['directory', '', 'file-not-found'],
  ];
  for (const [name, content, rule] of cases) {
    if (name === 'directory') mkdirSync(join(dir, name));
    else writeFileSync(join(dir, name), content);
    const t0 = Date.now();
    const r = await validateFile(join(dir, name), opts);
    assert.is(r.issues.length, 1, name);
    assert.is(r.issues[0].rule, rule, name);
    assert.ok(Date.now() - t0 < 3000, `${name} took ${Date.now() - t0} ms`);
  }
});

test('a missing root file is one issue naming it', async () => {
  const r = await validateFile('/nonexistent/claw.yaml', opts);
  assert.equal(r.issues.map((i) => [i.file, i.rule, i.message]), [['/nonexistent/claw.yaml', 'file-not-found', 'file does not exist']]);
});

test('fs reader: exists() is false only when nothing is there (the optional claw.runtime.yaml probe throws nothing)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-reader-'));
  writeFileSync(join(dir, 'a.yaml'), 'x: 1\n');
  assert.is(reader.exists!(join(dir, 'a.yaml')), true);
  assert.is(reader.exists!(join(dir, 'missing.yaml')), false);
  assert.is(reader.exists!(dir), true, 'a directory is there: read() reports EISDIR');
  assert.is(reader.exists!(join(dir, 'a.yaml', 'below')), true, 'ENOTDIR is not "nothing there": read() reports it');
});

test.run();
