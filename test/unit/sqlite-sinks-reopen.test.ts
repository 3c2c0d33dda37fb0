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

test.run();
