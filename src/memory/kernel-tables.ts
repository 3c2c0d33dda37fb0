// The kernel's small persistent state kept in the memory database when the agent has one (docs/memory.md): the provider
// token ledger (kernel/ledger.ts LedgerStore) and the settled tool-call outcomes of the request_id dedup cache
// (kernel/idempotency.ts DedupStore). One database = one fsync'ed journal for everything, instead of a file per
// provider; the file ledger stays the store of agents without memory.
import type { LedgerEntry, LedgerStore } from '../kernel/ledger.ts';
import type { DedupRecord, DedupStore } from '../kernel/idempotency.ts';
import type { SqliteDatabase } from './sqlite/types.ts';
import { nodeCrypto } from '../node/lazy.ts';
import { createMissing } from './sqlite/shared.ts';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS claw_ledger(provider TEXT PRIMARY KEY, day TEXT NOT NULL, tokens INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS claw_tool_requests(
  request_id TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, outcome TEXT NOT NULL, settled_at INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS claw_tool_requests_age ON claw_tool_requests(settled_at);
`;
const TABLES = ['claw_ledger', 'claw_tool_requests', 'claw_tool_requests_age'];

/**
 * Ledger rows in the database. A provider with no row yet reads through to `previous` (the file ledger the agent
 * used before it had memory), so today's budget survives the move.
 */
export function sqliteLedgerStore(db: SqliteDatabase, previous?: LedgerStore): LedgerStore {
  createMissing(db, TABLES, SCHEMA);
  return {
    async load(provider) {
      const r = db.prepare('SELECT day, tokens FROM claw_ledger WHERE provider = ?').get(provider);
      if (r) return { day: String(r.day), tokens: Number(r.tokens) };
      return previous?.load(provider);
    },
    async save(provider, e: LedgerEntry) {
      db.prepare('INSERT INTO claw_ledger(provider, day, tokens) VALUES (?, ?, ?) ON CONFLICT(provider) DO UPDATE SET day = excluded.day, tokens = excluded.tokens').run(
        provider,
        e.day,
        e.tokens,
      );
    },
  };
}

/**
 * A call's fingerprint is its canonical arguments, secrets included (a provider key passed to a tool): the row keeps
 * its SHA-256 only, which is all a retry needs to tell the same call from another one (docs/memory.md).
 */
const digestOf = (fingerprint: string): string => `sha256:${nodeCrypto().createHash('sha256').update(fingerprint).digest('hex')}`;

export function sqliteDedupStore(db: SqliteDatabase): DedupStore {
  createMissing(db, TABLES, SCHEMA);
  return {
    get(requestId, fingerprint) {
      const r = db.prepare('SELECT fingerprint, outcome, settled_at FROM claw_tool_requests WHERE request_id = ?').get(requestId);
      if (!r) return undefined;
      // A row written before digests were kept holds the text itself: still compared, and replaced by the next put.
      const kept = String(r.fingerprint);
      const sameCall = kept.startsWith('sha256:') ? kept === digestOf(fingerprint) : kept === fingerprint;
      return { sameCall, outcome: JSON.parse(String(r.outcome)) as DedupRecord['outcome'], settledAt: Number(r.settled_at) };
    },
    put(requestId, rec) {
      db.transaction(() => {
        db.prepare('INSERT OR REPLACE INTO claw_tool_requests(request_id, fingerprint, outcome, settled_at) VALUES (?, ?, ?, ?)').run(
          requestId,
          digestOf(rec.fingerprint),
          JSON.stringify(rec.outcome),
          rec.settledAt,
        );
      });
    },
    prune(before) {
      db.prepare('DELETE FROM claw_tool_requests WHERE settled_at < ?').run(before);
    },
  };
}
