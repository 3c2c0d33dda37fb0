// The kernel's state in the memory database (src/memory/kernel-tables.ts): the token ledger (reading through to
// the file ledger it replaces) and the tool-call dedup outcomes, which make a retry after a restart get the
// first answer (src/kernel/idempotency.ts with a DedupStore).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/memory/sqlite/open.ts';
import { sqliteDedupStore, sqliteLedgerStore } from '../../src/memory/kernel-tables.ts';
import { DedupCache } from '../../src/kernel/idempotency.ts';
import { TokenLedger, type LedgerEntry, type LedgerStore } from '../../src/kernel/ledger.ts';
import { ProtocolError } from '../../src/protocol/errors.ts';
import { FakeClock } from './helpers/fakes.ts';

const dir = mkdtempSync(join(tmpdir(), 'claw-kernel-tables-'));
const path = join(dir, 'memory.db');

test('ledger: rows in the database survive reopening; a provider without a row reads the previous (file) store', async () => {
  const files = new Map<string, LedgerEntry>([['old', { day: '2026-02-22', tokens: 700 }]]);
  const fileStore: LedgerStore = { load: async (p) => files.get(p), save: async (p, e) => void files.set(p, e) };
  const clock = new FakeClock(); // 2026-02-22
  let db = await openDatabase({ path, adapter: 'sqljs' });
  let ledger = new TokenLedger(sqliteLedgerStore(db, fileStore), clock);
  assert.is(await ledger.usedToday('old'), 700, 'read through to the file ledger');
  await ledger.record('old', 50);
  await ledger.record('new', 10);
  assert.equal(files.get('old'), { day: '2026-02-22', tokens: 700 }, 'the file ledger is no longer written');
  db.close();
  db = await openDatabase({ path, adapter: 'sqljs' });
  ledger = new TokenLedger(sqliteLedgerStore(db, fileStore), clock);
  assert.is(await ledger.usedToday('old'), 750);
  assert.is(await ledger.usedToday('new'), 10);
  clock.wall += 86_400_000;
  assert.is(await ledger.usedToday('old'), 0, 'a new UTC day starts from zero');
  db.close();
});

test('dedup: a settled result or protocol error is answered again after a restart, within the window only', async () => {
  const clock = new FakeClock();
  let db = await openDatabase({ path: join(dir, 'dedup.db'), adapter: 'sqljs' });
  let store = sqliteDedupStore(db);
  let cache = new DedupCache(clock, 300_000, () => store);
  let runs = 0;
  const ok = cache.run('r1', 'fp', async () => (runs++, { content: [{ type: 'text', text: 'hi' }] })) as any;
  assert.equal(await ok.outcome, { content: [{ type: 'text', text: 'hi' }] });
  const denied = cache.run('r2', () => 'fp2', async () => {
    runs++;
    throw new ProtocolError(-32011, 'Policy denied: rule x', { rule_id: 'x' });
  }) as any;
  await denied.outcome.catch(() => {});
  // A synchronous result is persisted too (the builtin fast path answers without a promise).
  assert.equal((cache.run('r3', 'fp3', () => (runs++, 'sync')) as any).outcome, 'sync');
  await new Promise((r) => setTimeout(r, 0));
  db.close();

  // "Restart": a new process has a new cache over the reopened database.
  db = await openDatabase({ path: join(dir, 'dedup.db'), adapter: 'sqljs' });
  store = sqliteDedupStore(db);
  cache = new DedupCache(clock, 300_000, () => store);
  const again = cache.run('r1', 'fp', async () => (runs++, 'ran again')) as any;
  assert.is(again.reused, true);
  assert.equal(again.outcome, { content: [{ type: 'text', text: 'hi' }] });
  // A remembered error is raised again (synchronously: it is already known), the same code, message and data.
  try {
    cache.run('r2', 'fp2', async () => 'ran again');
    assert.unreachable('the denial is answered again');
  } catch (e) {
    assert.instance(e, ProtocolError);
    assert.equal((e as ProtocolError).toJSON(), { code: -32011, message: 'Policy denied: rule x', data: { rule_id: 'x' } });
  }
  assert.equal(cache.run('r1', 'other', async () => 'x'), { conflict: true });
  assert.equal((cache.run('r3', 'fp3', () => 'ran again') as any).outcome, 'sync');
  assert.is(runs, 3);
  clock.wall += 300_001; // past the window: the id is new again
  const later = new DedupCache(clock, 300_000, () => store);
  assert.is((later.run('r1', 'fp', async () => (runs++, 'fresh')) as any).reused, false);
  assert.is(runs, 4);
  db.close();
});

test('dedup: a failing store never fails the call', async () => {
  const broken = {
    get() {
      throw new Error('EIO');
    },
    put() {
      throw new Error('EIO');
    },
    prune() {
      throw new Error('EIO');
    },
  };
  const cache = new DedupCache(new FakeClock(), 300_000, () => broken);
  assert.is(await (cache.run('a', 'fp', async () => 1) as any).outcome, 1);
});

test('dedup: the database keeps a digest of a call, never its arguments (they may hold a secret)', async () => {
  const SECRET = 'sk-live-7f3a9c0e11d24b5f';
  const fingerprint = JSON.stringify({ name: 'echo', arguments: { text: SECRET } });
  const file = join(dir, 'secret.db');
  let db = await openDatabase({ path: file, adapter: 'sqljs' });
  let store = sqliteDedupStore(db);
  store.put('r1', { fingerprint, outcome: { ok: { content: [{ type: 'text', text: '[REDACTED]' }] } }, settledAt: 1 });
  db.close();
  for (const f of readdirSync(dir).filter((n) => n.startsWith('secret.db'))) {
    assert.not.ok(readFileSync(join(dir, f)).includes(SECRET), `${f} holds the secret`);
  }
  db = await openDatabase({ path: file, adapter: 'sqljs' });
  store = sqliteDedupStore(db);
  assert.is(store.get('r1', fingerprint)?.sameCall, true, 'the same call is recognised by its digest');
  assert.is(store.get('r1', fingerprint.replace(SECRET, 'other'))?.sameCall, false);
  assert.is(store.get('r2', fingerprint), undefined);
  db.close();
});

test.after(() => rmSync(dir, { recursive: true, force: true }));

test.run();
