// Tasks as rows of the memory database (docs/a2a.md "Tasks"): the "kept in the memory database", so a
// task survives a restart on the same fdatasync'ed journal as memory entries (sql.js by default: one journal
// record per change of state instead of a rewritten file; docs/memory.md "Storage"). Strings are bound
// well-formed by the SQLite layer, so the live table and its replay after a restart are the same.
import { rmSync } from 'node:fs';
import { journalOf, readTaskFile, type TaskStore } from './task-store.ts';
import type { A2aTask } from './types.ts';

/**
 * The part of the memory layer's SqliteDatabase (src/memory/sqlite/types.ts) this store uses, declared here:
 * adapters do not import each other (scripts/check-layers.mjs); the runtime hands over the memory's database.
 */
export interface TaskDatabase {
  exec(sql: string): void;
  prepare(sql: string): { run(...params: (string | number)[]): unknown; all(): Record<string, unknown>[] };
  /** Commits (durably, on the journalled path) when `fn` returns. */
  transaction<T>(fn: () => T): T;
}

const SCHEMA = `CREATE TABLE IF NOT EXISTS claw_a2a_tasks(id TEXT PRIMARY KEY, updated_at INTEGER NOT NULL, task TEXT NOT NULL) WITHOUT ROWID;`;

/**
 * `previousFile`: the data_dir task file an agent without memory kept; its tasks are taken into an empty table
 * once, in one transaction, and the file removed, so a Memory added later does not lose the task history.
 */
export function sqliteTaskStore(db: TaskDatabase, previousFile?: string): TaskStore {
  // Created only when missing: on sql.js a no-op DDL is still a journal record, fsynced and replayed at every open.
  if (db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'claw_a2a_tasks'").all().length === 0) db.exec(SCHEMA);
  const put = (t: A2aTask) => db.prepare('INSERT OR REPLACE INTO claw_a2a_tasks(id, updated_at, task) VALUES (?, ?, ?)').run(t.id, t.updatedAt, JSON.stringify(t));
  return {
    kind: 'memory',
    async load() {
      const rows = db.prepare('SELECT task FROM claw_a2a_tasks').all();
      if (rows.length === 0 && previousFile) {
        const old = await readTaskFile(previousFile);
        if (old.length > 0) db.transaction(() => old.forEach(put));
        rmSync(previousFile, { force: true });
        rmSync(journalOf(previousFile), { force: true });
        return old;
      }
      return rows.map((r) => JSON.parse(String(r.task)) as A2aTask);
    },
    async put(t) {
      db.transaction(() => put(t));
    },
    async remove(ids) {
      if (ids.length === 0) return;
      db.transaction(() => {
        const del = db.prepare('DELETE FROM claw_a2a_tasks WHERE id = ?');
        for (const id of ids) del.run(id);
      });
    },
  };
}
