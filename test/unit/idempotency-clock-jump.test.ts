// The persisted request_id window (src/kernel/idempotency.ts) across a wall-clock step (src/kernel/wall-age.ts;
// docs/boards.md "Clock"): a board that started at 1970 settles a call, NTP steps the clock to today, the
// runtime restarts and the client retries: the retry must get the first answer, not run the call again.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DedupCache, type DedupRecord, type DedupSaved, type DedupStore } from '../../src/kernel/idempotency.ts';
import { FakeClock } from './helpers/fakes.ts';

function memoryStore(): DedupStore & { rows: Map<string, DedupRecord> } {
  const rows = new Map<string, DedupRecord>();
  return {
    rows,
    get: (id, fp): DedupSaved | undefined => {
      const r = rows.get(id);
      return r && { sameCall: r.fingerprint === fp, outcome: r.outcome, settledAt: r.settledAt };
    },
    put: (id, r) => void rows.set(id, r),
    prune: (before) => {
      for (const [id, r] of rows) if (r.settledAt < before) rows.delete(id);
    },
  };
}

test('settled at 1970, the clock steps to 2026, other calls come in, the runtime restarts: the retry is answered from the store', async () => {
  const clock = new FakeClock();
  clock.wall = 10_000;
  const store = memoryStore();
  let runs = 0;
  const first = new DedupCache(clock, 300_000, () => store);
  clock.advance(250_000);
  await (first.run('r1', 'fp', async () => (++runs, 'done')) as any).outcome;
  clock.advance(30_000);
  clock.wall = Date.UTC(2026, 11, 7, 8, 0, 0); // NTP's first answer
  clock.advance(31_000); // over a window since start: the next call prunes the store
  await (first.run('other', 'fp2', async () => 'x') as any).outcome;
  assert.ok(store.rows.has('r1'), 'r1 pruned: it settled 61 s ago by the monotonic clock');
  // Restart (a new process on the same database), then the client's retry.
  const later = new DedupCache(clock, 300_000, () => store);
  const again = later.run('r1', 'fp', async () => (++runs, 'ran twice')) as any;
  assert.is(again.reused, true);
  assert.is(runs, 1);
});

test('a record from before a restart stamped by an unset clock (1970) is within the window for the first window of uptime', async () => {
  const clock = new FakeClock();
  const store = memoryStore();
  store.put('r1', { fingerprint: 'fp', outcome: { ok: 'done' }, settledAt: 70_000 });
  const c = new DedupCache(clock, 300_000, () => store);
  assert.is((c.run('r1', 'fp', async () => 'ran twice') as any).reused, true);
});

test('a record stamped a year ahead (settled before the clock was set back, then a restart) is used for one window of uptime, not for the year', async () => {
  const clock = new FakeClock();
  const store = memoryStore();
  const ahead = clock.wall + 365 * 86_400_000;
  store.put('r1', { fingerprint: 'fp', outcome: { ok: 'done' }, settledAt: ahead });
  store.put('r2', { fingerprint: 'fp', outcome: { ok: 'done' }, settledAt: ahead });
  const c = new DedupCache(clock, 300_000, () => store);
  clock.mono += 60_000;
  clock.wall += 60_000;
  assert.is((c.run('r1', 'fp', async () => 'ran twice') as any).reused, true, 'of unknown age, but at most this uptime: within the window');
  clock.mono += 300_000;
  clock.wall += 300_000;
  const reused = c.run('r2', 'another call', () => 'ran') as any;
  assert.not.ok(reused.conflict, 'the window is over by this uptime: a reused id is a new call, not a conflict');
  assert.is(reused.outcome, 'ran');
});

test.run();
