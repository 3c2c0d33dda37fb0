// destination: sqlite — every audit record mirrored into a table of the project's SQLite layer
// (src/memory/sqlite: node:sqlite / bun:sqlite, else sql.js), opened lazily on the first record
// (docs/audit.md "Destinations"). A queryable copy, never the record: the hash-chained file is
// written first; rows are inserted in small transactions off the tool path. A failure (a full disk:
// the transaction rolls back) is told once and the rows stay queued, tried again after 5 s, doubling
// to 5 min, so the mirror catches up once the disk takes writes again; the file goes on meanwhile.
import type { AuditRecord } from './record.ts';
import type { AuditSink } from './log.ts';
import type { AdapterName, SqliteDatabase } from '../memory/sqlite/types.ts';
import { createMissing } from '../memory/sqlite/shared.ts';

export const AUDIT_TABLE_SQL = `CREATE TABLE IF NOT EXISTS audit_records (
  hash TEXT PRIMARY KEY,
  seq INTEGER NOT NULL,
  ts TEXT NOT NULL,
  kind TEXT NOT NULL,
  prev TEXT NOT NULL,
  record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_records_seq ON audit_records(seq);
CREATE INDEX IF NOT EXISTS audit_records_ts ON audit_records(ts);
CREATE INDEX IF NOT EXISTS audit_records_kind ON audit_records(kind);`;

const AUDIT_SCHEMA_NAMES = ['audit_records', 'audit_records_seq', 'audit_records_ts', 'audit_records_kind'];

export interface SqliteSinkOptions {
  path: string;
  adapter?: AdapterName | 'auto';
  /** Records kept in memory while the database opens or between flushes; more are dropped and counted. */
  queueMax?: number;
  open?: (o: { path: string; adapter?: AdapterName | 'auto' }) => Promise<SqliteDatabase>;
  warn(msg: string, fields?: Record<string, unknown>): void;
}

export interface SqliteSink extends AuditSink {
  /** Resolves when every record written so far is in the table (or the mirror has failed). */
  flush(): Promise<void>;
  close(): Promise<void>;
  stats(): { inserted: number; dropped: number; failed: boolean };
}

/** The first wait before a failed open or insert is tried again; it doubles up to RETRY_MAX_MS. */
export const RETRY_FIRST_MS = 5000;
const RETRY_MAX_MS = 5 * 60_000;

export function sqliteSink(o: SqliteSinkOptions & { retryFirstMs?: number }): SqliteSink {
  const queueMax = o.queueMax ?? 10_000;
  const retryFirst = o.retryFirstMs ?? RETRY_FIRST_MS;
  let retryMs = 0;
  let pending: AuditRecord[] = [];
  let pendingLines: string[] = [];
  /** Rows below this seq go with the next flush: their records left the file chain (retention). */
  let prunedBelow: number | undefined;
  let db: Promise<SqliteDatabase | undefined> | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let inserted = 0;
  let dropped = 0;
  let failed = false;
  let closed = false;

  /** A failed open or insert: told once per outage, tried again later (the queue keeps what is not in yet). */
  const fail = (e: unknown) => {
    if (!failed) o.warn('audit sqlite mirror failed; its rows are kept and tried again (the audit file is still written)', { path: o.path, error: (e as Error)?.message ?? String(e) });
    failed = true;
    retryMs = retryMs === 0 ? retryFirst : Math.min(retryMs * 2, RETRY_MAX_MS);
    if (closed) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      void flush();
    }, retryMs);
    (timer as { unref?: () => void }).unref?.();
  };
  const recovered = () => {
    if (!failed) return;
    failed = false;
    retryMs = 0;
    o.warn('audit sqlite mirror writing again', { path: o.path });
  };

  const opened = (): Promise<SqliteDatabase | undefined> =>
    (db ??= (async () => {
      try {
        const d = o.open ? await o.open({ path: o.path, adapter: o.adapter }) : await (await import('../memory/sqlite/open.ts')).openDatabase({ path: o.path, adapter: o.adapter });
        // Only what is missing: on sql.js a no-op DDL is still a journal record, fsynced, at every start.
        createMissing(d, AUDIT_SCHEMA_NAMES, AUDIT_TABLE_SQL);
        return d;
      } catch (e) {
        fail(e);
        return undefined;
      }
    })());

  async function flush(): Promise<void> {
    const d = await opened();
    if (!d) {
      db = undefined; // the open failed: the retry opens it again
      return;
    }
    const recs = pending;
    const lines = pendingLines;
    pending = [];
    pendingLines = [];
    try {
      d.transaction(() => {
        const ins = d.prepare('INSERT OR IGNORE INTO audit_records (hash, seq, ts, kind, prev, record) VALUES (?, ?, ?, ?, ?, ?)');
        for (let i = 0; i < recs.length; i++) {
          const r = recs[i];
          inserted += ins.run(r.hash, r.seq, r.ts, r.kind, r.prev, lines[i]).changes;
        }
        // Retention: the rows of the deleted segments' records go with them, by seq (a record stamped at 1970
        // before NTP's step is older than any cutoff by `ts`, whatever the file chain kept).
        if (prunedBelow !== undefined) d.prepare('DELETE FROM audit_records WHERE seq < ?').run(prunedBelow);
      });
      prunedBelow = undefined;
      recovered();
    } catch (e) {
      // Rolled back: nothing of it is in the table. Back in front of the queue, within queueMax (the file has all).
      const keep = Math.max(0, queueMax - pending.length);
      if (recs.length > keep && dropped++ === 0) o.warn('audit sqlite mirror: queue full, records dropped from the mirror (the audit file has them)', { queue_max: queueMax });
      pending = [...recs.slice(0, keep), ...pending];
      pendingLines = [...lines.slice(0, keep), ...pendingLines];
      fail(e);
    }
  }

  const schedule = () => {
    // While failing, the retry timer is the next flush.
    if (timer || closed) return;
    timer = setTimeout(() => {
      timer = undefined;
      void flush();
    }, 0);
    (timer as { unref?: () => void }).unref?.();
  };

  return {
    write(r, line) {
      if (closed) return;
      if (pending.length >= queueMax) {
        if (dropped++ === 0) o.warn('audit sqlite mirror: queue full, records dropped from the mirror (the audit file has them)', { queue_max: queueMax });
        return;
      }
      pending.push(r);
      pendingLines.push(line);
      schedule();
    },
    pruned(firstKeptSeq) {
      if (closed) return;
      prunedBelow = Math.max(prunedBelow ?? 0, firstKeptSeq);
      schedule();
    },
    flush,
    async close() {
      if (closed) return;
      if (timer) clearTimeout(timer);
      timer = undefined;
      closed = true; // no retry scheduled from here: what a last flush cannot insert stays in the file only
      await flush();
      const d = db ? await db : undefined;
      try {
        d?.close();
      } catch (e) {
        fail(e);
      }
    },
    stats: () => ({ inserted, dropped, failed }),
  };
}
