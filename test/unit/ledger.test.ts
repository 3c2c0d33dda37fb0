// TokenLedger (src/kernel/ledger.ts) and the file store (src/node/ledger-file.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TokenLedger } from '../../src/kernel/ledger.ts';
import { createFileLedgerStore } from '../../src/node/ledger-file.ts';
import { FakeClock } from './helpers/fakes.ts';
import { MemLedgerStore } from './helpers/gate-fakes.ts';

const tmp = () => mkdtempSync(join(tmpdir(), 'claw-ledger-'));

test('usedToday / record: per UTC day, floors and ignores negatives', async () => {
  const clock = new FakeClock();
  const store = new MemLedgerStore();
  const l = new TokenLedger(store, clock);
  assert.is(await l.usedToday('p'), 0);
  await l.record('p', 10.9);
  await l.record('p', -5);
  assert.equal(store.data.get('p'), { day: '2026-02-22', tokens: 10 });
  assert.is(await l.usedToday('p'), 10);
  clock.advance(14 * 3600_000);
  assert.is(await l.usedToday('p'), 0);
  await l.record('p', 3);
  assert.equal(store.data.get('p'), { day: '2026-02-23', tokens: 3 });
});

test('tokens_per_day across wall-clock steps: set back a year, the day keeps counting; spent at a 1970 boot, carried into today', async () => {
  const clock = new FakeClock();
  const store = new MemLedgerStore();
  const l = new TokenLedger(store, clock);
  await l.record('p', 900);
  clock.wall -= 365 * 86_400_000; // date -s, a bad NTP server
  assert.is(await l.usedToday('p'), 900, 'no fresh budget from a step back');
  await l.record('p', 50);
  assert.equal(store.data.get('p'), { day: '2026-02-22', tokens: 950 });
  clock.wall = 5 * 60_000; // a board booted at 1970 spends tokens (a local provider) before NTP
  const boot = new TokenLedger(new MemLedgerStore(), clock);
  await boot.record('p', 700);
  clock.wall = Date.UTC(2026, 1, 22, 8); // NTP's first answer
  assert.is(await boot.usedToday('p'), 700, 'spent minutes ago: counts toward today');
  clock.wall += 86_400_000;
  assert.is(await boot.usedToday('p'), 0, 'a real new day starts from zero');
});

test('file store: round trip, atomic write leaves no .tmp, concurrent record() loses nothing', async () => {
  const dir = tmp();
  try {
    const store = createFileLedgerStore(dir);
    assert.is(await store.load('p'), undefined);
    const l = new TokenLedger(store, new FakeClock());
    await Promise.all(Array.from({ length: 25 }, () => l.record('prov/1', 2)));
    assert.is(await l.usedToday('prov/1'), 50);
    assert.equal(readdirSync(join(dir, 'ledger')), ['prov%2F1.json']);
    assert.equal(JSON.parse(readFileSync(join(dir, 'ledger', 'prov%2F1.json'), 'utf8')), { day: '2026-02-22', tokens: 50 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('file store: a malformed ledger is an error naming the file', async () => {
  const dir = tmp();
  try {
    mkdirSync(join(dir, 'ledger'));
    const f = join(dir, 'ledger', 'p.json');
    const store = createFileLedgerStore(dir);
    for (const bad of ['{"day":"2026-02-22"}', '{"day":1,"tokens":2}', '{"day":"2026-02-22","tokens":"5"}']) {
      writeFileSync(f, bad);
      try {
        await store.load('p');
        assert.unreachable(bad);
      } catch (e) {
        assert.is((e as Error).message, `ledger file ${dir}/ledger/p.json is malformed`);
      }
    }
    writeFileSync(f, 'not json');
    let threw = false;
    await store.load('p').catch(() => (threw = true));
    assert.ok(threw);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
