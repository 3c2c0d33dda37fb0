// The tables every store shares, and the migration of databases made before this layout (schema 1 → 2).
//
// Schema 2 is shaped by bytes per entry (goal: ≤ 3× the payload written on average, measured by scripts/bench-memory.mjs). On
// sql.js each entry costs its journal record plus its share of every later whole-image snapshot, so the image
// per entry counts as much as the record. Against schema 1 (315 B of image per ~110 B conversation entry):
//   - `sid`: stores are numbered (claw_memory_stores); a store name was repeated in the row, in every index
//     and in every journal record.
//   - `id` NULL: the entry id is the decimal `seq`, so neither a 36-byte UUID nor its UNIQUE index is kept.
//     Only ids that cannot be derived are stored: entries of databases made before, compaction digests (which
//     reuse the seq of their oldest entry), and ids of an injected `newId`. seq is AUTOINCREMENT: never reused,
//     so a derived id is never handed out twice by one database.
//   - `ts` INTEGER (Unix ms) instead of a 24-character ISO string, in the row and in the time index.
//   - indexes: (sid, scope) orders by seq already (SQLite appends the rowid to every index entry), and
//     (sid, scope, ts) serves time ranges and retention by age; the key index stays partial (key IS NOT NULL).
//   - requests: WITHOUT ROWID on its primary key (one b-tree, not two), fingerprint 16 bytes of SHA-256
//     instead of 64 hex characters, ts integer.
import type { SqliteDatabase } from '../sqlite/types.ts';

export const SCHEMA = `
CREATE TABLE IF NOT EXISTS claw_memory_stores(sid INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS claw_memory_entries(
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  sid INTEGER NOT NULL, id TEXT, scope TEXT NOT NULL DEFAULT '', key TEXT,
  content TEXT NOT NULL, metadata TEXT, ts INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS claw_memory_entries_order ON claw_memory_entries(sid, scope);
CREATE INDEX IF NOT EXISTS claw_memory_entries_ts ON claw_memory_entries(sid, scope, ts);
CREATE INDEX IF NOT EXISTS claw_memory_entries_key ON claw_memory_entries(sid, scope, key) WHERE key IS NOT NULL;
CREATE TABLE IF NOT EXISTS claw_memory_requests(
  sid INTEGER NOT NULL, request_id TEXT NOT NULL, fingerprint NOT NULL, ids TEXT NOT NULL, ts INTEGER NOT NULL,
  PRIMARY KEY(sid, request_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS claw_memory_vectors(seq INTEGER PRIMARY KEY, sid INTEGER NOT NULL, vec BLOB NOT NULL);
`;

/** ISO 8601 text of schema 1 → Unix ms, in SQL (so the journal records one statement, not every row). */
const MS = (col: string) =>
  `CASE WHEN ${col} GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'
     THEN CAST(strftime('%s', ${col}) AS INTEGER) * 1000 + CAST(substr(${col}, 21, 3) AS INTEGER)
     ELSE CAST(round((julianday(${col}) - 2440587.5) * 86400000) AS INTEGER) END`;

function hasColumn(db: SqliteDatabase, table: string, column: string): boolean {
  return db.prepare('SELECT 1 AS x FROM pragma_table_info(?) WHERE name = ?').get(table, column) !== undefined;
}

/**
 * Brings a database to schema 2 and returns; a no-op (reads only) when it is there already. Schema 1 tables are
 * rebuilt in one transaction: rows keep their seq (FTS rowids and vectors stay valid) and their UUID ids, ISO
 * times become ms, the AUTOINCREMENT high-water mark is carried over. Store triggers (semantic FTS) went with
 * the old table; each semantic store re-creates its own on open.
 */
export function ensureSchema(db: SqliteDatabase): void {
  const old = hasColumn(db, 'claw_memory_entries', 'store');
  if (!old) {
    if (!hasColumn(db, 'claw_memory_entries', 'sid')) db.exec(SCHEMA);
    return;
  }
  db.transaction(() => {
    const oldRequests = hasColumn(db, 'claw_memory_requests', 'store');
    const oldVectors = hasColumn(db, 'claw_memory_vectors', 'store');
    db.exec(`
      CREATE TABLE IF NOT EXISTS claw_memory_stores(sid INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
      INSERT OR IGNORE INTO claw_memory_stores(name) SELECT DISTINCT store FROM claw_memory_entries ORDER BY store;
      ${oldRequests ? 'INSERT OR IGNORE INTO claw_memory_stores(name) SELECT DISTINCT store FROM claw_memory_requests ORDER BY store;' : ''}
      CREATE TABLE claw_memory_entries_v2(
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        sid INTEGER NOT NULL, id TEXT, scope TEXT NOT NULL DEFAULT '', key TEXT,
        content TEXT NOT NULL, metadata TEXT, ts INTEGER NOT NULL);
      INSERT INTO claw_memory_entries_v2(seq, sid, id, scope, key, content, metadata, ts)
        SELECT e.seq, s.sid, e.id, e.scope, e.key, e.content, e.metadata, ${MS('e.ts')}
        FROM claw_memory_entries e JOIN claw_memory_stores s ON s.name = e.store ORDER BY e.seq;
      INSERT INTO sqlite_sequence(name, seq) SELECT 'claw_memory_entries_v2', 0
        WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'claw_memory_entries_v2');
      UPDATE sqlite_sequence SET seq = max(seq, coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'claw_memory_entries'), 0))
        WHERE name = 'claw_memory_entries_v2';
      DROP TABLE claw_memory_entries;
      ALTER TABLE claw_memory_entries_v2 RENAME TO claw_memory_entries;
    `);
    if (oldRequests)
      db.exec(`
        ALTER TABLE claw_memory_requests RENAME TO claw_memory_requests_v1;
        CREATE TABLE claw_memory_requests(
          sid INTEGER NOT NULL, request_id TEXT NOT NULL, fingerprint NOT NULL, ids TEXT NOT NULL, ts INTEGER NOT NULL,
          PRIMARY KEY(sid, request_id)) WITHOUT ROWID;
        INSERT INTO claw_memory_requests(sid, request_id, fingerprint, ids, ts)
          SELECT s.sid, r.request_id, r.fingerprint, r.ids, ${MS('r.ts')}
          FROM claw_memory_requests_v1 r JOIN claw_memory_stores s ON s.name = r.store;
        DROP TABLE claw_memory_requests_v1;
      `);
    if (oldVectors)
      db.exec(`
        CREATE TABLE claw_memory_vectors_v2(seq INTEGER PRIMARY KEY, sid INTEGER NOT NULL, vec BLOB NOT NULL);
        INSERT INTO claw_memory_vectors_v2(seq, sid, vec)
          SELECT v.seq, s.sid, v.vec FROM claw_memory_vectors v JOIN claw_memory_stores s ON s.name = v.store;
        DROP TABLE claw_memory_vectors;
        ALTER TABLE claw_memory_vectors_v2 RENAME TO claw_memory_vectors;
      `);
    db.exec(SCHEMA);
  });
}

/** The number of a store (registered on first use). */
export function storeId(db: SqliteDatabase, name: string): number {
  const get = db.prepare('SELECT sid FROM claw_memory_stores WHERE name = ?');
  const row = get.get(name);
  if (row) return Number(row.sid);
  db.prepare('INSERT INTO claw_memory_stores(name) VALUES (?)').run(name);
  return Number(get.get(name)!.sid);
}
