// Reopening a memory database writes nothing (docs/memory.md "When the database opens"): the stores' tables, FTS
// index and triggers and the kernel tables are created once; a later open only reads the schema. On sql.js every
// write is a journal record, fsynced, and replayed at every open after it, so schema statements run on every open
// would add records (and fsyncs) per restart. And the FTS engine is asked for, not tried (shared.ts probeFts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { memoryModule } from '../../src/runtime/memory-module.ts';
import { openDatabase } from '../../src/memory/sqlite/open.ts';
import { probeFts } from '../../src/memory/sqlite/shared.ts';
import type { Session } from '../../src/kernel/agent.ts';
import { captureLogger, makeManifest, primitive } from './helpers/fakes.ts';

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'claw-mem-reopen-'));
  dirs.push(d);
  return d;
};

function session(): Session {
  const stores = [
    { name: 'context', type: 'conversation' },
    { name: 'facts', type: 'semantic' },
  ];
  return { manifest: makeManifest(3, { memory: primitive('Memory', 'mem', { stores }) }), protocolVersion: '0.3.0', level: 3, capabilities: {}, abort: new AbortController() } as Session;
}

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

test('a reopen appends nothing to the journal; the first open made everything, so queries work', async () => {
  const dataDir = tmp();
  const journal = join(dataDir, 'memory', 'mem.db.claw-journal');
  await start(dataDir);
  const first = statSync(journal).size;
  for (let i = 0; i < 3; i++) {
    const r = await start(dataDir);
    assert.equal(r.entries, []);
  }
  assert.is(statSync(journal).size, first, 'journal size after three more opens');
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
  db.close();
});

test.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test.run();
