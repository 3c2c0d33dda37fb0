// ListTasks from the attacker's side (docs/a2a.md "Methods"): a caller whose tasks hold large messages cannot make
// one small request answer megabytes (held in memory until a client that never reads is cut off). A page stops
// before MAX_PAGE_CHARS of JSON; the next page token carries on, so every task is still listed exactly once.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { TaskService, MAX_PAGE_CHARS } from '../../src/a2a/tasks.ts';
import { memoryTaskStore } from '../../src/a2a/task-store.ts';
import { runOperation } from '../../src/a2a/operations.ts';
import { StreamSlots } from '../../src/a2a/stream.ts';
import { captureLogger } from './helpers/fakes.ts';
import { openA2aAccess } from './helpers/a2a-open-access.ts';

test('ListTasks with history: 30 tasks of 60 KB messages come in pages under MAX_PAGE_CHARS, each task once', async () => {
  let n = 0;
  const agent = { channelTurns: true, turn: async () => ({ reply: 'ok', outcome: 'message' as const, toolCalls: [], rejections: 0 }) };
  const svc = new TaskService({ store: memoryTaskStore(), getAgent: () => agent, tools: false, newId: () => `id-${++n}`, now: () => ++n, log: captureLogger(), access: () => openA2aAccess() });
  await svc.open();
  for (let i = 0; i < 30; i++) await svc.create({ role: 'user', messageId: `m-${i}`, parts: [{ type: 'text', text: 'x'.repeat(60_000) }] }, { wait: true, caller: 'A' });
  const io = { res: undefined as never, caller: 'A', slots: new StreamSlots(), frame: (e: unknown) => e };
  const seen: string[] = [];
  let pageToken: string | undefined;
  let pages = 0;
  do {
    const page: any = await runOperation('ListTasks', { pageSize: 100, historyLength: 10, ...(pageToken ? { pageToken } : {}) }, svc, '1.0', io);
    const chars = JSON.stringify(page).length;
    // Before: one page of all 30 tasks, ~1.8 MB.
    assert.ok(chars < MAX_PAGE_CHARS + 1024, `a page of ${chars} characters`);
    assert.is(page.totalSize, 30);
    seen.push(...page.tasks.map((t: { id: string }) => t.id));
    pageToken = page.nextPageToken;
    pages++;
  } while (pageToken);
  assert.is(new Set(seen).size, 30);
  assert.is(seen.length, 30);
  assert.ok(pages >= 2);
  // Without history the same tasks are small: one page, as before.
  const small: any = await runOperation('ListTasks', { pageSize: 100 }, svc, '1.0', io);
  assert.equal([small.tasks.length, small.nextPageToken], [30, '']);
});

test.run();
