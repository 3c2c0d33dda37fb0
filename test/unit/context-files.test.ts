// Identity context_files (§5.1) go through the bounded reader: regular files only, cut to size, and for a
// manifest sent over the wire only inside its file root (docs/manifest.md "Manifests sent over the wire").
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_CONTEXT_FILE_CHARS, readContextFiles } from '../../src/runtime/agent-module.ts';
import { captureLogger, makeManifest } from './helpers/fakes.ts';

const base = mkdtempSync(join(tmpdir(), 'claw-context-files-'));
const root = join(base, 'agent');
mkdirSync(root);
writeFileSync(join(root, 'USER.md'), 'the user');
writeFileSync(join(root, 'BIG.md'), 'é'.repeat(MAX_CONTEXT_FILE_CHARS * 3));
writeFileSync(join(base, 'secret.md'), 'outside-content');
symlinkSync(join(base, 'secret.md'), join(root, 'link.md'));
execFileSync('mkfifo', [join(root, 'pipe.md')]);

test.after(() => rmSync(base, { recursive: true, force: true }));

const files = { user: 'USER.md', big: 'BIG.md', zero: '/dev/zero', up: '../secret.md', link: 'link.md', fifo: 'pipe.md' };

test('a wire manifest: only regular files inside its root are read; the rest are logged, not read, at once', async () => {
  const m = makeManifest(1, { fileRoot: root });
  m.identity.spec.context_files = files;
  const log = captureLogger();
  const t0 = Date.now();
  const out = await readContextFiles(m, log);
  assert.ok(Date.now() - t0 < 2000, `read in ${Date.now() - t0} ms`);
  assert.equal(out.map(([n, t]) => [n, t.length]), [['user', 8], ['big', MAX_CONTEXT_FILE_CHARS]]);
  assert.equal(log.entries.map((e) => [e.msg, e.fields?.name, e.fields?.error]), [
    ['context file not readable', 'zero', 'outside'],
    ['context file not readable', 'up', 'outside'],
    ['context file not readable', 'link', 'outside'],
    ['context file not readable', 'fifo', 'not-regular'],
  ]);
  assert.not.match(log.text(), /outside-content/);
});

test('a launch manifest: its own links are followed, devices and FIFOs still refused', async () => {
  const m = makeManifest(1);
  m.identity.origin.file = join(root, 'claw.yaml');
  m.identity.spec.context_files = { link: 'link.md', zero: '/dev/zero', fifo: 'pipe.md' };
  const log = captureLogger();
  const out = await readContextFiles(m, log);
  assert.equal(out, [['link', 'outside-content']]);
  assert.equal(log.entries.map((e) => e.fields?.error), ['not-regular', 'not-regular']);
});

test.run();
