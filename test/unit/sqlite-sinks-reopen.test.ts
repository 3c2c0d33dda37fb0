// The audit mirror and the telemetry exporter create their tables only when missing: on sql.js a no-op DDL is
// still a journal record (fsynced, replayed at every open), so a reopen must run none (docs/memory.md).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openDatabase } from '../../src/memory/sqlite/open.ts';
import type { SqliteDatabase } from '../../src/memory/sqlite/types.ts';
import { sqliteSink } from '../../src/audit/sink-sqlite.ts';
import { sqliteExporter } from '../../src/telemetry/exporters/sqlite.ts';

/** The database with every exec()'d statement recorded. */
function recording(db: SqliteDatabase): { db: SqliteDatabase; execs: string[] } {
  const execs: string[] = [];
  const wrapped = Object.create(db) as SqliteDatabase;
  wrapped.exec = (sql: string) => {
    execs.push(sql);
    return db.exec(sql);
  };
  wrapped.close = () => {}; // the next round reopens the same database

  return { db: wrapped, execs };
}

test('audit sqlite mirror: the first open creates the table, a reopen runs no DDL', async () => {
  const db = await openDatabase({ path: ':memory:', adapter: 'sqljs' });
  for (const round of [0, 1]) {
    const r = recording(db);
    const sink = sqliteSink({ path: '<mem>', open: async () => r.db, warn: () => {} });
    sink.write({ seq: round + 1, ts: '2026-01-01T00:00:00.000Z', kind: 'tool.call', prev: 'p', hash: `h${round}` } as any, '{"line":1}');
    await sink.flush();
    assert.is(r.execs.filter((s) => /CREATE/i.test(s)).length, round === 0 ? 1 : 0, `round ${round}`);
    await sink.close().catch(() => {});
  }
  assert.is(Number((db.prepare('SELECT count(*) AS n FROM audit_records').get() as any).n), 2);
});

test('telemetry sqlite exporter: the first open creates the table, a reopen runs no DDL', async () => {
  const db = await openDatabase({ path: ':memory:', adapter: 'sqljs' });
  for (const round of [0, 1]) {
    const r = recording(db);
    const x = sqliteExporter('<mem>', async () => r.db);
    await x.export([{ claw: '0.3.0', event: 'tool.call', category: 'tool_calls', timestamp: '2026-01-01T00:00:00.000Z' } as any]);
    assert.is(r.execs.filter((s) => /CREATE/i.test(s)).length, round === 0 ? 1 : 0, `round ${round}`);
  }
  assert.is(Number((db.prepare('SELECT count(*) AS n FROM claw_telemetry').get() as any).n), 2);
});

test('audit sqlite mirror: a failed insert (a full disk) keeps the rows and catches up once writes work again', async () => {
  const db = await openDatabase({ path: ':memory:', adapter: 'sqljs' });
  let full = false;
  const flaky = Object.create(db) as SqliteDatabase;
  flaky.transaction = ((fn: () => unknown) => {
    if (full) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    return db.transaction(fn);
  }) as SqliteDatabase['transaction'];
  flaky.close = () => {};
  const warnings: string[] = [];
  const sink = sqliteSink({ path: '<mem>', open: async () => flaky, warn: (m) => warnings.push(m), retryFirstMs: 30 });
  const rec = (n: number) => [{ seq: n, ts: '2026-01-01T00:00:00.000Z', kind: 'tool.call', prev: 'p', hash: `f${n}` } as any, `{"n":${n}}`] as const;
  sink.write(...rec(1));
  await sink.flush();
  full = true;
  sink.write(...rec(2));
  sink.write(...rec(3));
  await sink.flush();
  assert.is(sink.stats().failed, true);
  sink.write(...rec(4)); // still accepted while failing
  await new Promise((r) => setTimeout(r, 80));
  assert.is(sink.stats().failed, true, 'still failing while the disk is full (retried)');
  full = false;
  for (const t0 = Date.now(); sink.stats().failed && Date.now() - t0 < 5000; ) await new Promise((r) => setTimeout(r, 20));
  assert.is(sink.stats().failed, false, 'caught up');
  const n = (db.prepare("SELECT group_concat(seq) AS s FROM (SELECT seq FROM audit_records WHERE hash LIKE 'f%' ORDER BY seq)").get() as any).s;
  assert.is(n, '1,2,3,4');
  assert.equal(warnings.filter((w) => /failed|writing again/.test(w)), [
    'audit sqlite mirror failed; its rows are kept and tried again (the audit file is still written)',
    'audit sqlite mirror writing again',
  ]);
  await sink.close();
});

test('audit sqlite mirror: an open that fails is tried again', async () => {
  const db = await openDatabase({ path: ':memory:', adapter: 'sqljs' });
  let tries = 0;
  const sink = sqliteSink({
    path: '<mem>',
    open: async () => {
      if (++tries === 1) throw new Error('EROFS: read-only file system, open');
      return Object.assign(Object.create(db), { close() {} }) as SqliteDatabase;
    },
    warn: () => {},
    retryFirstMs: 20,
  });
  sink.write({ seq: 9, ts: '2026-01-01T00:00:00.000Z', kind: 'tool.call', prev: 'p', hash: 'o9' } as any, '{}');
  await sink.flush();
  for (const t0 = Date.now(); tries < 2 && Date.now() - t0 < 5000; ) await new Promise((r) => setTimeout(r, 20));
  await sink.flush();
  assert.is(tries, 2);
  assert.is(Number((db.prepare("SELECT count(*) AS n FROM audit_records WHERE hash = 'o9'").get() as any).n), 1);
  await sink.close();
});

test.run();
