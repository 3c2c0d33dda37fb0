// The A2A file task store (src/a2a/task-store.ts) leaves no temporary file behind: a failed write removes its
// own (cut short by a full disk it would hold what space was left), and load() removes those of earlier
// processes killed mid-write.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileTaskStore } from '../../src/a2a/task-store.ts';

const task = (id: string) => ({ id, contextId: 'c', status: { state: 'completed' }, kind: 'task' }) as any;

test('a write that fails removes its temporary file; the next one that can write stores every task', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-a2a-store-'));
  try {
    const s = fileTaskStore(dir);
    await s.load();
    // tasks.json as a non-empty directory: the rename onto it fails, as a full disk fails the write.
    mkdirSync(join(dir, 'tasks.json'));
    writeFileSync(join(dir, 'tasks.json', 'x'), '');
    await s.put(task('t1')).then(() => assert.unreachable('the write must fail'), () => {});
    assert.equal(readdirSync(dir).filter((n) => n.endsWith('.tmp')), [], 'no temporary file left');
    rmSync(join(dir, 'tasks.json'), { recursive: true });
    await s.put(task('t2'));
    assert.equal((await fileTaskStore(dir).load()).map((t) => t.id).sort(), ['t1', 't2']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('load() removes the temporary files of earlier processes and nothing else', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-a2a-store-'));
  try {
    writeFileSync(join(dir, 'tasks.json.4242.tmp'), '{"version":1,"tasks":[{"id":"half');
    writeFileSync(join(dir, 'notes.tmp'), 'not ours');
    await fileTaskStore(dir).load();
    assert.equal(readdirSync(dir).sort(), ['notes.tmp']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
