// `sqlite` exporter (§5.11): events in table `claw_telemetry` of the database at `path`, queryable on the
// board (`SELECT event, count(*) FROM claw_telemetry GROUP BY event`). Uses the same SQLite layer as
// memory (src/memory/sqlite), loaded only when this exporter is configured.
import type { Exporter } from '../exporter.ts';
import type { SqliteDatabase } from '../../memory/sqlite/types.ts';
import { createMissing } from '../../memory/sqlite/shared.ts';

const DDL = `CREATE TABLE IF NOT EXISTS claw_telemetry (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  timestamp TEXT NOT NULL,
  category TEXT NOT NULL,
  event TEXT NOT NULL,
  agent TEXT,
  data TEXT NOT NULL
)`;

export function sqliteExporter(path: string, open: (path: string) => Promise<SqliteDatabase>): Exporter {
  let db: Promise<SqliteDatabase> | undefined;
  const database = () =>
    (db ??= open(path).then(
      (d) => {
        // Only when missing: on sql.js a no-op DDL is still a journal record, fsynced, at every start.
        createMissing(d, ['claw_telemetry'], DDL);
        return d;
      },
      (e) => {
        // Not kept: an open that failed (a full or read-only disk at start) is tried again by the next batch.
        db = undefined;
        throw e;
      },
    ));
  return {
    type: 'sqlite',
    async export(batch) {
      const d = await database();
      const insert = d.prepare('INSERT INTO claw_telemetry (timestamp, category, event, agent, data) VALUES (?, ?, ?, ?, ?)');
      d.transaction(() => {
        for (const e of batch) insert.run(e.timestamp, e.category, e.event, e.agent ?? null, JSON.stringify(e));
      });
    },
    async close() {
      const d = await db?.catch(() => undefined);
      d?.close();
    },
  };
}
