// What the data_dir task store (src/a2a/task-store.ts) writes: a change appends the task to the journal (one
// fsynced line), and the whole list is rewritten only when the journal has grown past it — bytes written grow
// with the changes, not with (tasks kept × changes). Measured as the bytes this process hands to write(2)
// (/proc/self/io `wchar`), nothing else written meanwhile. Also: what a crash can leave (a torn last line) is
// read past, and the sqlite store's one-time import takes the journal's tasks too.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileTaskStore, readTaskFile } from '../../src/a2a/task-store.ts';
import { TaskService } from '../../src/a2a/tasks.ts';
import type { ChannelAgent } from '../../src/channels/types.ts';
import { captureLogger } from './helpers/fakes.ts';

let n = 0;
const newId = () => `id-${++n}`;
const agent: ChannelAgent = { channelTurns: true, turn: async () => ({ reply: 'ok '.repeat(100), outcome: 'message', toolCalls: [], rejections: 0 }) };
const wchar = (): number | undefined => {
  try {
    return Number(/wchar:\s*(\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))![1]);
  } catch {
    return undefined;
  }
};

test('300 tasks with 1 KB messages, each submitted → working → completed: bytes written stay a small multiple of what changed', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-a2a-bytes-'));
  try {
    const svc = new TaskService({ store: fileTaskStore(dir), getAgent: () => agent, tools: false, newId, now: () => Date.now(), log: captureLogger() });
    await svc.open();
    const before = wchar();
    const tasks = 300;
    for (let i = 0; i < tasks; i++) await svc.create({ role: 'user', messageId: newId(), parts: [{ type: 'text', text: 'x'.repeat(1024) }] }, { wait: true });
    const after = wchar();
    const one = Buffer.byteLength(JSON.stringify(svc.list({ pageSize: 1 }).tasks[0]));
    await svc.close();
    const kept = await fileTaskStore(dir).load();
    assert.is(kept.length, tasks, 'every task read back');
    assert.ok(kept.every((t) => t.state === 'completed'));
    if (before !== undefined && after !== undefined) {
      const written = after - before;
      // Two changes per task (working, completed) of ~1.5 KB: ~0.9 MB appended, plus rewrites of the list that
      // together are at most about as much. Rewriting the list at each change wrote ~tasks² × one: ~130 MB.
      console.log(`  ${tasks} tasks × 2 changes, ${one} bytes a task: ${(written / 1e6).toFixed(2)} MB written`);
      assert.ok(written < 4 * 2 * tasks * one, `${written} bytes written for ${2 * tasks} changes of ${one} bytes`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a torn last journal line (a crash mid-append) is read past; the next open compacts and the sqlite import sees the journal', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-a2a-bytes-'));
  try {
    const s = fileTaskStore(dir);
    await s.load();
    const t = (id: string, state = 'completed') => ({ id, contextId: 'c', state, history: [], artifacts: [], createdAt: 1, updatedAt: 1 }) as any;
    await s.put(t('a', 'working'));
    await s.put(t('a'));
    await s.put(t('b'));
    await s.remove(['b']);
    await s.put(t('c'));
    const journal = readdirSync(dir).find((f) => f.endsWith('.jsonl'));
    assert.ok(journal, 'the changes went to the journal');
    appendFileSync(join(dir, journal), '{"put":{"id":"half');
    assert.equal((await readTaskFile(join(dir, 'tasks.json'))).map((x) => `${x.id}:${x.state}`).sort(), ['a:completed', 'c:completed']);
    const again = fileTaskStore(dir);
    assert.equal((await again.load()).map((x) => x.id).sort(), ['a', 'c']);
    assert.not.ok(existsSync(join(dir, journal)), 'compacted at open: the torn line is gone');
    await again.put(t('d'));
    assert.equal((await fileTaskStore(dir).load()).map((x) => x.id).sort(), ['a', 'c', 'd']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
