// A manifest sent in claw.initialize names files that whoever reached the transport chose: they resolve against,
// and must stay inside, the launch manifest's directory (docs/manifest.md "Manifests sent over the wire").
// Each escape is tried against a real directory tree.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadWireManifest, wireRoot } from '../../src/runtime/wire-manifest.ts';
import { createFsReader } from '../../src/node/fs-reader.ts';

const dir = mkdtempSync(join(tmpdir(), 'claw-wire-files-'));
const root = join(dir, 'agent');
mkdirSync(join(root, 'tools'), { recursive: true });
mkdirSync(join(dir, 'elsewhere'));
const identity = (name: string) => `claw: "0.3.0"\nkind: Identity\nmetadata: { name: ${name} }\nspec: { personality: "p" }\n`;
writeFileSync(join(root, 'identity.yaml'), identity('inside'));
writeFileSync(join(dir, 'elsewhere', 'identity.yaml'), identity('outside'));
symlinkSync(join(dir, 'elsewhere', 'identity.yaml'), join(root, 'escape.yaml'));
symlinkSync(join(dir, 'elsewhere'), join(root, 'tools', 'linked'));
execFileSync('mkfifo', [join(root, 'fifo.yaml')]);

test.after(() => rmSync(dir, { recursive: true, force: true }));

const deps = { reader: createFsReader(), cwd: '/', config: {}, launchManifest: { file: join(root, 'claw.yaml') } };
const manifest = (identity: unknown, extra: Record<string, unknown> = {}) => ({
  claw: '0.3.0',
  kind: 'Claw',
  metadata: { name: 'wire' },
  spec: { identity, providers: [{ inline: { protocol: 'openai-compatible', endpoint: 'http://127.0.0.1:1/v1', model: 'm', auth: { type: 'none' } } }], ...extra },
});

async function refused(m: unknown, rule: string, mention: string): Promise<void> {
  const t0 = Date.now();
  const r = await loadWireManifest(m, '0.3.0', deps);
  assert.ok(Date.now() - t0 < 2000, `answered in ${Date.now() - t0} ms`);
  assert.is(r.manifest, undefined);
  const hit = r.issues.find((i) => i.rule === rule);
  assert.ok(hit, `${rule} in ${JSON.stringify(r.issues)}`);
  assert.ok(hit!.message.includes(mention), hit!.message);
  assert.not.ok(r.issues.some((i) => /personality|outside"/.test(i.message)), 'no file content in any message');
}

test('the root is the launch manifest directory, else the working directory', () => {
  assert.is(wireRoot(deps), root);
  assert.is(wireRoot({ cwd: '/srv/x' }), '/srv/x');
});

test('a reference inside the launch directory loads, resolved against it (not the cwd)', async () => {
  const r = await loadWireManifest(manifest('identity.yaml'), '0.3.0', deps);
  assert.equal(r.issues, []);
  assert.is(r.manifest!.identity.name, 'inside');
  assert.is(r.manifest!.fileRoot, root);
});

test('/dev/zero, /dev/urandom and absolute paths outside are refused before anything is opened', async () => {
  for (const ref of ['/dev/zero', '/dev/urandom', '/etc/passwd', join(dir, 'elsewhere', 'identity.yaml')]) await refused(manifest(ref), 'file-outside', JSON.stringify(ref));
});

test('../ climbing out of the launch directory is refused', async () => {
  for (const ref of ['../../etc/passwd', '../elsewhere/identity.yaml', 'tools/../../elsewhere/identity.yaml']) await refused(manifest(ref), 'file-outside', JSON.stringify(ref));
});

test('a FIFO inside the launch directory is refused without blocking', async () => {
  await refused(manifest('fifo.yaml'), 'file-not-regular', 'fifo.yaml');
});

test('a symlink inside the launch directory pointing outside it is refused', async () => {
  await refused(manifest('escape.yaml'), 'file-outside', 'escape.yaml');
});

test('globs: absolute, climbing, or reaching through a symlinked directory are refused', async () => {
  for (const glob of ['/etc/*', '../elsewhere/*.yaml', '*/../../elsewhere/*.yaml']) await refused(manifest('identity.yaml', { tools: [glob] }), 'file-outside', JSON.stringify(glob));
  const r = await loadWireManifest(manifest('identity.yaml', { tools: ['tools/linked/*.yaml'] }), '0.3.0', deps);
  assert.is(r.manifest, undefined);
  assert.equal(r.issues.map((i) => i.rule), ['glob-empty']);
});

test('the launch manifest itself (no within) still follows its own references anywhere: only the type rules apply', async () => {
  const { loadManifestValue } = await import('../../src/manifest/loader.ts');
  const r = await loadManifestValue(manifest('escape.yaml'), { file: join(root, 'claw.yaml'), baseDir: root, defaultClaw: '0.3.0' }, { reader: deps.reader });
  assert.is(r.manifest?.identity.name, 'outside');
  const z = await loadManifestValue(manifest('/dev/zero'), { file: join(root, 'claw.yaml'), baseDir: root, defaultClaw: '0.3.0' }, { reader: deps.reader });
  assert.equal(z.issues.map((i) => i.rule), ['file-not-regular']);
});

test.run();
