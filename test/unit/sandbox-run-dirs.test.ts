import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { drainRunDirs, privateParent, returnRunDir, takeRunDir } from '../../src/sandbox/run-dirs.ts';

test('a parent whose mode changed is replaced: its idle run dirs are not handed out, and it goes', async () => {
  const root = mkdtempSync(join(tmpdir(), 'claw-test-rundirs-'));
  try {
    const a = takeRunDir(root);
    const old = privateParent(root);
    await returnRunDir(root, a, true); // kept idle inside `old`
    chmodSync(old, 0o755);
    const b = takeRunDir(root);
    const now = privateParent(root);
    assert.is.not(now, old);
    assert.is(dirname(b), now);
    await returnRunDir(root, b, false);
    drainRunDirs();
    assert.equal(readdirSync(root), []);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test.run();
