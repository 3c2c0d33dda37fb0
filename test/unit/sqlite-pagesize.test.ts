// memory.page_size (docs/runtime-config.md): the native adapter creates a new database file with that page size
// and leaves an existing file's alone. Under a Node without node:sqlite this file re-runs itself under the Node 22
// of .build/runtimes (as sqlite-contract.test.ts does); skipped with a note when neither is there.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '../../src/memory/sqlite/open.ts';
import { nativeAvailable } from '../../src/memory/sqlite/native.ts';

const hasNative = await nativeAvailable();
const node22 = join(process.cwd(), '.build/runtimes/node22/node_modules/.bin/node');

if (hasNative) {
  test('native: page_size applies to a new file only', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'claw-pagesize-'));
    try {
      const path = join(dir, 'm.db');
      let db = await openDatabase({ path, adapter: 'native', pageSize: 1024 });
      db.exec('CREATE TABLE t(x)');
      assert.is(db.prepare('PRAGMA page_size').get()!.page_size, 1024);
      db.close();
      db = await openDatabase({ path, adapter: 'native', pageSize: 8192 });
      assert.is(db.prepare('PRAGMA page_size').get()!.page_size, 1024, 'an existing file keeps its page size');
      db.close();
      db = await openDatabase({ path: join(dir, 'd.db'), adapter: 'native' });
      db.exec('CREATE TABLE t(x)');
      assert.is(db.prepare('PRAGMA page_size').get()!.page_size, 4096, "SQLite's default without the option");
      db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
} else if (!process.env.CLAW_PAGESIZE_NESTED && existsSync(node22)) {
  test('native page_size, under Node 22 (node:sqlite)', () => {
    const r = spawnSync(node22, ['--no-warnings', fileURLToPath(import.meta.url)], { env: { ...process.env, CLAW_PAGESIZE_NESTED: '1', NO_COLOR: '1' }, encoding: 'utf8', timeout: 60_000 });
    const out = `${r.stdout}\n${r.stderr}`.replace(/\x1b\[[0-9;]*m/g, '');
    assert.is(r.status, 0, out);
    assert.match(out, /Passed:\s+1/);
  });
} else {
  console.log('  SKIPPED native page_size: no node:sqlite here and no .build/runtimes Node 22');
}

test.run();
