// Tasks kept in the memory database (docs/a2a.md "Tasks"): a task left working by a process that stopped without
// closing anything is read back from the journal by the next one and failed; retention by count and by age; the
// data_dir file of an agent without memory is taken into the table once.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/memory/sqlite/open.ts';
import { sqliteTaskStore } from '../../src/a2a/task-store-sqlite.ts';
import { memoryTaskStore, type TaskStore } from '../../src/a2a/task-store.ts';
import { TaskService, RESTART_MESSAGE } from '../../src/a2a/tasks.ts';
import type { ChannelAgent } from '../../src/channels/types.ts';
import type { A2aTask } from '../../src/a2a/types.ts';
import { captureLogger, deferred } from './helpers/fakes.ts';

let n = 0;
const newId = () => `id-${++n}`;
const msg = (text: string) => ({ role: 'user' as const, messageId: newId(), parts: [{ type: 'text' as const, text }] });
const agentOf = (answer: () => Promise<string> | string): ChannelAgent => ({
  channelTurns: true,
  turn: async () => ({ reply: await answer(), outcome: 'message', toolCalls: [], rejections: 0 }),
});

const svc = (store: TaskStore, agent: ChannelAgent | undefined, o: { now?: () => number; monotonic?: () => number; maxTasks?: number; maxAgeMs?: number } = {}) =>
  new TaskService({ store, getAgent: () => agent, tools: false, newId, now: o.now ?? (() => Date.now()), monotonic: o.monotonic ?? o.now, log: captureLogger(), maxTasks: o.maxTasks, maxAgeMs: o.maxAgeMs });

test('sql.js memory database: a working task survives a crash as failed, a finished one as it was', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-a2a-store-'));
  try {
    const path = join(dir, 'm.db');
    const db = await openDatabase({ path, adapter: 'sqljs' });
    const gate = deferred<string>();
    let calls = 0;
    const s = svc(sqliteTaskStore(db), agentOf(() => (++calls === 1 ? 'done \uD800 here' : gate.promise)));
    await s.open();
    const finished = await s.create(msg('one'), { wait: true });
    const running = await s.create(msg('two'), { wait: false });
    await new Promise((r) => setTimeout(r, 10));
    // No close(): the process is gone. A second open of the same file replays the journal.
    const db2 = await openDatabase({ path, adapter: 'sqljs' });
    const s2 = svc(sqliteTaskStore(db2), undefined);
    await s2.open();
    assert.is(s2.get(finished.id).state, 'completed');
    // A lone surrogate in a reply is kept as a JSON escape in the row: the replayed task is the live one.
    assert.equal(s2.get(finished.id).artifacts[0].parts[0], { type: 'text', text: 'done \uD800 here' });
    assert.equal(s2.get(finished.id), JSON.parse(JSON.stringify(finished)));
    assert.is(s2.get(running.id).state, 'failed');
    assert.is(s2.get(running.id).statusMessage, RESTART_MESSAGE);
    assert.is(s2.list({ state: 'working' }).totalSize, 0);
    // The verdict is stored too: a third process reads it as failed with the same reason.
    await s2.close();
    const db3 = await openDatabase({ path, adapter: 'sqljs' });
    const rows = db3.prepare('SELECT task FROM claw_a2a_tasks').all().map((r) => JSON.parse(String(r.task)) as A2aTask);
    assert.is(rows.find((t) => t.id === running.id)!.state, 'failed');
    gate.resolve('late');
    db.close();
    db2.close();
    db3.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('retention: finished tasks past max_tasks or max age are dropped from the store, running ones kept', async () => {
  let clock = Date.UTC(2026, 10, 22);
  const store = memoryTaskStore();
  const gate = deferred<string>();
  let i = 0;
  const s = svc(store, agentOf(() => (++i === 1 ? gate.promise : 'ok')), { now: () => clock, maxTasks: 3, maxAgeMs: 10_000 });
  await s.open();
  const slow = await s.create(msg('slow'), { wait: false });
  const ids: string[] = [];
  for (let k = 0; k < 4; k++) {
    clock += 10;
    ids.push((await s.create(msg(`m${k}`), { wait: true })).id);
  }
  // 5 created, max 3: the two oldest finished ones went; the running one stays.
  assert.equal(s.list().tasks.map((t) => t.id).sort(), [slow.id, ids[2], ids[3]].sort());
  assert.equal((await store.load()).map((t) => t.id).sort(), [slow.id, ids[2], ids[3]].sort());
  // Age: past 10 s after their last change, finished tasks go at the next create (or open).
  clock += 20_000;
  const fresh = await s.create(msg('late'), { wait: true });
  assert.equal(s.list().tasks.map((t) => t.id).sort(), [slow.id, fresh.id].sort());
  gate.resolve('x');
  await s.close();
  const reopened = svc(store, undefined, { now: () => clock + 20_000, maxAgeMs: 10_000 });
  await reopened.open();
  assert.is(reopened.list().totalSize, 0, 'at open too: the age limit applies to what was kept');
});

test('booted at 1970, NTP steps the clock 56 years on: a task finished a minute before is kept; its age counts on the monotonic clock', async () => {
  let wall = 60_000;
  let mono = 0;
  const store = memoryTaskStore();
  const s = svc(store, agentOf(() => 'ok'), { now: () => wall, monotonic: () => mono, maxAgeMs: 10 * 60_000 });
  await s.open();
  const before = await s.create(msg('before NTP'), { wait: true });
  wall += 60_000 + 56 * 365 * 86_400_000;
  mono += 60_000;
  const after = await s.create(msg('after NTP'), { wait: true });
  assert.is(s.get(before.id).state, 'completed', 'a minute old, not 56 years: a caller polling GetTask still finds it');
  assert.ok((await store.load()).some((t) => t.id === before.id), 'and the store keeps it');
  mono += 9.5 * 60_000;
  wall += 9.5 * 60_000;
  const later = await s.create(msg('later'), { wait: true });
  assert.equal(s.list().tasks.map((t) => t.id).sort(), [after.id, later.id].sort(), 'past max age by the monotonic clock: gone');
  await s.close();
  // The next process, its clock set: a kept task stamped while the clock was not ("1970") is of unknown age,
  // taken as old as this process; one stamped by a set clock is aged by it.
  const kept = (await store.load())[0];
  await store.save([{ ...kept, id: 'unset', updatedAt: 120_000 }, { ...kept, id: 'stale', updatedAt: wall - 11 * 60_000 }]);
  let mono2 = 0;
  const next = svc(store, agentOf(() => 'ok'), { now: () => wall + mono2, monotonic: () => mono2, maxAgeMs: 10 * 60_000 });
  await next.open();
  assert.equal(next.list().tasks.map((t) => t.id), ['unset'], 'the unset-clock one kept at open, the stale one dropped');
  mono2 += 11 * 60_000;
  await next.create(msg('much later'), { wait: true });
  assert.not.ok(next.list().tasks.some((t) => t.id === 'unset'), 'max age after start: gone');
  await next.close();
});

test('the clock stepped back an hour (a bad NTP answer, `date -s`): over max_tasks the oldest finished task goes, by the monotonic clock, not the one with the smallest stamp', async () => {
  let wall = Date.UTC(2026, 11, 7, 12);
  let mono = 0;
  const s = svc(memoryTaskStore(), agentOf(() => 'ok'), { now: () => wall, monotonic: () => mono, maxTasks: 3 });
  await s.open();
  const a = await s.create(msg('a'), { wait: true });
  mono += 1000;
  wall += 1000;
  const b = await s.create(msg('b'), { wait: true });
  mono += 1000;
  wall += 1000 - 3_600_000;
  const c = await s.create(msg('c'), { wait: true });
  mono += 1000;
  wall += 1000;
  const d = await s.create(msg('d'), { wait: true });
  assert.equal(s.list().tasks.map((t) => t.id).sort(), [b.id, c.id, d.id].sort(), `kept ${s.list().tasks.map((t) => t.id)}; a was the oldest`);
  await s.close();
});

test('the data_dir task file of an agent without memory is taken into an empty table once', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-a2a-store-'));
  try {
    mkdirSync(join(dir, 'a2a'));
    const file = join(dir, 'a2a/tasks.json');
    const old: A2aTask = { id: 'old-1', contextId: 'c', state: 'completed', history: [], artifacts: [], createdAt: 1, updatedAt: 1 };
    writeFileSync(file, JSON.stringify({ version: 1, tasks: [old] }));
    // A change since the list was last written, in its journal (task-store.ts).
    writeFileSync(`${file}l`, `${JSON.stringify({ put: { ...old, id: 'old-2' } })}\n`);
    const db = await openDatabase({ path: join(dir, 'm.db'), adapter: 'sqljs' });
    assert.equal((await sqliteTaskStore(db, file).load()).map((t) => t.id).sort(), ['old-1', 'old-2']);
    assert.not.ok(existsSync(file));
    assert.not.ok(existsSync(`${file}l`));
    assert.equal((await sqliteTaskStore(db, file).load()).map((t) => t.id).sort(), ['old-1', 'old-2']);
    db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the task table is created once: a reopen runs no DDL (a journal record per start on sql.js)', async () => {
  const db = await openDatabase({ path: ':memory:', adapter: 'sqljs' });
  const execs: string[] = [];
  const counting = { exec: (sql: string) => (execs.push(sql), db.exec(sql)), prepare: (sql: string) => db.prepare(sql), transaction: <T>(fn: () => T) => db.transaction(fn) };
  await sqliteTaskStore(counting).load();
  await sqliteTaskStore(counting).load();
  assert.is(execs.length, 1);
  db.close();
});

test.run();
