// The memory database opens when something first needs it, not at STARTING (docs/memory.md "When the database
// opens"): start() touches nothing on disk; a memory method, the ledger, a tool call's dedup wait and the agent
// loop's conversation store each open it; what was stored comes back after a restart (the journal replays as
// before); a stop while it is opening closes what was opened.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { memoryModule } from '../../src/runtime/memory-module.ts';
import type { Session } from '../../src/kernel/agent.ts';
import { captureLogger, makeManifest } from './helpers/fakes.ts';
import { memorySession, tempDirs } from './helpers/memory-session.ts';

const { tmp, removeTempDirs } = tempDirs('claw-mem-lazy-');
const session = memorySession;

const handler = (mod: ReturnType<typeof memoryModule>, method: string, params: unknown) => mod.methods![method].handler(params, { transport: 'test' } as any, {} as any) as Promise<any>;
let n = 0;
const rid = () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`;
const opened = (log: ReturnType<typeof captureLogger>) => log.entries.filter((e) => e.msg === 'memory open').length;

test('start() opens nothing; the first memory method opens the database, and a restart finds what was stored', async () => {
  const dataDir = tmp();
  const log = captureLogger();
  const mod = memoryModule({ config: { memory: { adapter: 'sqljs' } } as any, log, dataDir });
  await mod.start!(session(), {} as any);
  assert.not.ok(existsSync(join(dataDir, 'memory')), 'no database directory after start');
  assert.is(opened(log), 0);
  const r = await handler(mod, 'claw.memory.store', { store: 'facts', entries: [{ content: 'the kettle is in the kitchen' }], context: { request_id: rid() } });
  assert.is(r.stored, 1);
  assert.is(opened(log), 1);
  assert.ok(readdirSync(join(dataDir, 'memory')).some((f) => f.endsWith('.claw-journal')));
  await mod.stop!({} as any);

  const again = memoryModule({ config: { memory: { adapter: 'sqljs' } } as any, log, dataDir });
  await again.start!(session(), {} as any);
  const q = await handler(again, 'claw.memory.query', { store: 'facts', query: { type: 'semantic', text: 'kettle' } });
  assert.equal(q.entries.map((e: any) => e.content), ['the kettle is in the kitchen']);
  await again.stop!({} as any);
});

test('calls that arrive together while it opens open it once and run in arrival order', async () => {
  const log = captureLogger();
  const mod = memoryModule({ config: { memory: { adapter: 'sqljs' } } as any, log, dataDir: tmp() });
  await mod.start!(session(), {} as any);
  const store = handler(mod, 'claw.memory.store', { store: 'context', entries: [{ content: 'first' }], context: { request_id: rid() } });
  const query = handler(mod, 'claw.memory.query', { store: 'context', query: { type: 'time-range', time_range: {} } });
  assert.is((await store).stored, 1);
  assert.equal((await query).entries.map((e: any) => e.content), ['first'], 'the query pipelined behind the store sees it');
  assert.is(opened(log), 1);
  await mod.stop!({} as any);
});

test('an unknown store is refused without opening the database', async () => {
  const log = captureLogger();
  const dataDir = tmp();
  const mod = memoryModule({ config: { memory: { adapter: 'sqljs' } } as any, log, dataDir });
  await mod.start!(session(), {} as any);
  await handler(mod, 'claw.memory.query', { store: 'nope', query: { type: 'semantic', text: 'x' } }).then(
    () => assert.unreachable('should refuse'),
    (e) => assert.is(e.code, -32602),
  );
  assert.not.ok(existsSync(join(dataDir, 'memory')));
  await mod.stop!({} as any);
});

test('whenOpen() is pending until the database is open, then undefined; dedup and ledger live in it', async () => {
  const log = captureLogger();
  const fallback = { load: async () => ({ fallback: true }) as any, save: async () => {} };
  const mod = memoryModule({ config: { memory: { adapter: 'sqljs' } } as any, log, dataDir: tmp() });
  const ledger = mod.ledgerStore(fallback);
  await mod.start!(session(), {} as any);
  assert.is(mod.dedupStore(), undefined, 'nothing open yet');
  const wait = mod.whenOpen!();
  assert.ok(wait instanceof Promise);
  await wait;
  assert.is(mod.whenOpen!(), undefined);
  assert.ok(mod.dedupStore(), 'the dedup outcomes are in the open database');
  await ledger.save('p', { day: '2026-01-01', tokens: 5 } as any);
  assert.equal(await ledger.load('p'), { day: '2026-01-01', tokens: 5 } as any, 'the ledger is the database one, not the fallback');
  await mod.stop!({} as any);
});

test('the ledger opens the database on first use', async () => {
  const log = captureLogger();
  const mod = memoryModule({ config: { memory: { adapter: 'sqljs' } } as any, log, dataDir: tmp() });
  const ledger = mod.ledgerStore({ load: async () => undefined, save: async () => {} });
  await mod.start!(session(), {} as any);
  assert.is(await ledger.load('p'), undefined);
  assert.is(opened(log), 1);
  await mod.stop!({} as any);
});

test('the conversation store handed out before the open opens it on first use and keeps the turns', async () => {
  const log = captureLogger();
  const dataDir = tmp();
  const mod = memoryModule({ config: { memory: { adapter: 'sqljs' } } as any, log, dataDir });
  await mod.start!(session(), {} as any);
  const conv = mod.conversationStore()!;
  assert.is(conv.kind, 'conversation');
  assert.is(opened(log), 0);
  await conv.store([{ content: 'hello', metadata: { role: 'user' } }]);
  assert.is(opened(log), 1);
  assert.equal((await conv.query({ type: 'time-range' })).entries.map((e) => e.content), ['hello']);
  assert.is(conv.count(), 1);
  await mod.stop!({} as any);
});

test('a database that cannot be opened: memory calls answer -32030, the conversation store keeps nothing', async () => {
  const log = captureLogger();
  // data_dir is a file: the database directory cannot be made.
  const notADir = join(tmp(), 'file');
  writeFileSync(notADir, '');
  const mod = memoryModule({ config: { memory: { adapter: 'sqljs' } } as any, log, dataDir: notADir });
  await mod.start!(session(), {} as any);
  await handler(mod, 'claw.memory.query', { store: 'facts', query: { type: 'semantic', text: 'x' } }).then(
    () => assert.unreachable('should fail'),
    (e) => assert.is(e.code, -32030),
  );
  assert.ok(log.entries.some((e) => e.msg === 'memory backend unavailable'));
  const conv = mod.conversationStore()!;
  assert.equal(await conv.store([{ content: 'x' }]), []);
  assert.equal((await conv.query({ type: 'time-range' })).entries, []);
  assert.is(mod.whenOpen!(), undefined, 'a failed open is not retried for every call (only after reopenAfterMs)');
  await mod.stop!({} as any);
});

test('a failed open is tried again by a call after reopenAfterMs, not sooner: a data directory that appears later heals without a restart', async () => {
  const log = captureLogger();
  const base = tmp();
  const dataDir = join(base, 'data');
  writeFileSync(dataDir, ''); // storage not there yet: a file where the directory should be
  const mod = memoryModule({ config: { memory: { adapter: 'sqljs' } } as any, log, dataDir, reopenAfterMs: 200 });
  await mod.start!(session(), {} as any);
  const store = () => handler(mod, 'claw.memory.store', { store: 'facts', entries: [{ content: 'kept' }], context: { request_id: rid() } });
  await store().then(
    () => assert.unreachable('should fail'),
    (e) => {
      assert.is(e.code, -32030);
      assert.match(e.message, /cannot create directory .*ENOTDIR/);
      assert.is(e.data.retryable, true);
    },
  );
  rmSync(dataDir);
  await store().then(
    () => assert.unreachable('within reopenAfterMs the failure stands'),
    (e) => assert.is(e.code, -32030),
  );
  assert.is(log.entries.filter((e) => e.msg === 'memory backend unavailable').length, 1, 'not re-opened for every call');
  await new Promise((r) => setTimeout(r, 250));
  assert.is((await store()).stored, 1, 'the next call after the wait opens it');
  assert.is(opened(log), 1);
  await mod.stop!({} as any);
});

test('a stop while the database is opening waits for it and closes it; the session is gone afterwards', async () => {
  const log = captureLogger();
  const mod = memoryModule({ config: { memory: { adapter: 'sqljs' } } as any, log, dataDir: tmp() });
  await mod.start!(session(), {} as any);
  const pending = mod.whenOpen!();
  await mod.stop!({} as any);
  await pending;
  assert.is(mod.dedupStore(), undefined);
  assert.is(mod.whenOpen!(), undefined);
});

test('a manifest without memory never opens anything', async () => {
  const log = captureLogger();
  const dataDir = tmp();
  const mod = memoryModule({ config: {} as any, log, dataDir });
  await mod.start!({ ...session(), manifest: makeManifest(1, {}) } as Session, {} as any);
  assert.is(mod.whenOpen!(), undefined);
  assert.is(mod.conversationStore(), undefined);
  assert.not.ok(existsSync(join(dataDir, 'memory')));
  await mod.stop!({} as any);
});

test.after(removeTempDirs);
test.run();
