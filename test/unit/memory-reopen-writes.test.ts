// What an open of the memory database costs (docs/memory.md "When the database opens"). The stores' tables, FTS
// index and triggers and the kernel tables are created once; a later open only reads the schema (on sql.js every
// write is a journal record, fsynced, and replayed at every open after it). A journal that changed the schema is
// folded into a snapshot at the next open, so DDL is not replayed at every start. The FTS engine is asked for,
// not tried (shared.ts probeFts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { memoryModule } from '../../src/runtime/memory-module.ts';
import { openDatabase } from '../../src/memory/sqlite/open.ts';
import { openDurable } from '../../src/memory/sqlite/durable.ts';
import { probeFts } from '../../src/memory/sqlite/shared.ts';
import type { Session } from '../../src/kernel/agent.ts';
import { captureLogger } from './helpers/fakes.ts';
import { memorySession, tempDirs } from './helpers/memory-session.ts';

const { tmp, removeTempDirs } = tempDirs('claw-mem-reopen-');
const session = memorySession;

const query = (mod: ReturnType<typeof memoryModule>) =>
  mod.methods!['claw.memory.query'].handler({ store: 'facts', query: { type: 'semantic', text: 'kettle' } }, { transport: 'test' } as any, {} as any) as Promise<any>;

/** One start: the first query opens the database (stores, kernel tables); then stop. */
async function start(dataDir: string): Promise<any> {
  const mod = memoryModule({ config: { memory: { adapter: 'sqljs' } } as any, log: captureLogger(), dataDir });
  await mod.start!(session(), {} as any);
  const r = await query(mod);
  await mod.stop!({} as any);
  return r;
}

test('after the open that folds the schema into a snapshot, a reopen writes nothing; queries work', async () => {
  const dataDir = tmp();
  const file = join(dataDir, 'memory', 'mem.db');
  await start(dataDir);
  assert.not.ok(existsSync(file), 'the first start only journals');
  await start(dataDir);
  const files = () => [readFileSync(file), readFileSync(`${file}.claw-journal`)].map((b) => b.toString('base64'));
  const folded = files();
  for (let i = 0; i < 3; i++) {
    const r = await start(dataDir);
    assert.equal(r.entries, []);
  }
  assert.equal(files(), folded, 'snapshot and journal after three more opens');
});

test('a journal that changed the schema is folded into a snapshot at the next open; one of rows only is not', async () => {
  const path = join(tmp(), 'db');
  let db = await openDurable(path);
  db.exec('CREATE TABLE t(x TEXT)');
  db.prepare('INSERT INTO t(x) VALUES (?)').run('a');
  db.close();
  db = await openDurable(path);
  assert.is(db.durable.recovery.recordsReplayed, 2);
  assert.is(db.durable.stats.snapshots, 1, 'the DDL was folded');
  db.prepare('INSERT INTO t(x) VALUES (?)').run('b');
  db.close();
  db = await openDurable(path);
  assert.is(db.durable.recovery.recordsReplayed, 1, 'only the row written since');
  assert.is(db.durable.stats.snapshots, 0, 'rows alone wait for the size thresholds');
  assert.equal(db.prepare('SELECT x FROM t ORDER BY x').all().map((r) => r.x), ['a', 'b']);
  db.close();
});

test('the FTS probe reads compile options and runs no statement that creates anything', async () => {
  const seen: string[] = [];
  const db = await openDatabase({ adapter: 'sqljs' });
  const engine = probeFts((sql) => {
    seen.push(sql);
    return db.prepare(sql).get();
  });
  assert.is(engine, 'fts4', 'sql.js is built with FTS3/FTS4, not FTS5');
  assert.is(db.capabilities.fts, 'fts4');
  assert.ok(seen.every((s) => /^\s*select\b/i.test(s) && !/\bcreate\b/i.test(s)), seen.join(' | '));
  const noDiagnostics = () => {
    throw new Error('no such function: sqlite_compileoption_used');
  };
  assert.is(probeFts(noDiagnostics), 'none', 'a SQLite without compile-option diagnostics: JS ranking');
  db.close();
});

test.after(removeTempDirs);

test.run();
