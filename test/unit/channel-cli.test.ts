// The claw chat helper (implicit vs declared cli channel) and the on-disk pairing store shared by a running
// agent and `claw pair` (two storages on one directory, as two processes would have).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkChannelUser, cliChannelOf, cliGate } from '../../src/channels/cli-user.ts';
import { filePairingStorage, pairingDir } from '../../src/channels/pairing-store.ts';
import { approvePairing, Pairing } from '../../src/channels/pairing.ts';
import { makeManifest, primitive } from './helpers/fakes.ts';

const clock = { now: () => 1_700_000_000_000, monotonic: () => 0 };
const cli = (access?: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  primitive('Channel', 'term', { type: 'cli', transport: 'stdio', auth: { secret_ref: 'T' }, ...(access ? { access_control: access } : {}), ...extra });

test('no cli Channel: the implicit channel, no gate at all (profile §3)', () => {
  const m = makeManifest(2, { channels: [primitive('Channel', 'q', { type: 'queue', transport: 'polling', auth: { secret_ref: 'T' } })] });
  assert.is(cliChannelOf(m), undefined);
  assert.is(cliGate(m, { dataDir: '/nonexistent', clock }), undefined);
});

test('a cli Channel: its access_control applies to the OS user; the gate keeps rate history across lines', () => {
  const m = makeManifest(2, { channels: [cli({ mode: 'role-based', roles: [{ id: 'pi', role: 'viewer' }] }, { processing: { rate_limit: { messages_per_minute: 1, burst: 2 } } })] });
  const g = cliGate(m, { dataDir: '/nonexistent', clock })!;
  const v = g.check('pi', 'hello');
  assert.ok(v.allow && v.role === 'viewer' && v.tools === false);
  assert.is(g.check('root', 'hello').allow, false);
  assert.is(g.check('pi', 'again').allow, true);
  const third = g.check('pi', 'third');
  assert.ok(!third.allow && third.reason === 'rate_limited');
  // The one-shot form has no history.
  assert.is(checkChannelUser(m.channels[0], 'pi', 'x', { dataDir: '/nonexistent', clock }).allow, true);
  // An open cli channel without access_control: the local user passes with tools.
  const open = checkChannelUser(cli(), 'anyone', 'x', { dataDir: '/nonexistent', clock });
  assert.ok(open.allow && open.tools);
});

test('pairing on disk: the agent writes pending.json, claw pair writes paired/<hash>.json, the agent sees it', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'claw-pair-'));
  try {
    const dir = pairingDir(dataDir, 'term');
    assert.is(dir, `${dataDir}/channels/term/pairing`);
    let t = clock.now();
    let n = 0;
    const agentSide = new Pairing({ code_expiry_minutes: 5, max_pending: 3 }, filePairingStorage(dir), () => t, () => n++ % 31);
    const first = agentSide.check('pi');
    assert.ok(!first.paired && 'code' in first);
    const pending = JSON.parse(readFileSync(join(dir, 'pending.json'), 'utf8'));
    assert.equal(pending.pending.map((p: { user: string }) => p.user), ['pi']);
    // "claw pair" in another process: its own storage object on the same directory.
    t += 60_000;
    assert.equal(approvePairing(filePairingStorage(dir), 'code' in first ? first.code : '', t), { ok: true, user: 'pi' });
    assert.equal(readdirSync(join(dir, 'paired')).length, 1);
    assert.match(readdirSync(join(dir, 'paired'))[0], /^[0-9a-f]{64}\.json$/, 'the file name does not carry the user id');
    assert.equal(agentSide.check('pi'), { paired: true });
    assert.equal(JSON.parse(readFileSync(join(dir, 'pending.json'), 'utf8')).pending, [], 'pending entry dropped');
    assert.equal(readdirSync(dir).filter((f) => f.endsWith('.tmp')), []);
    // Unpairing (the user's file removed) takes effect at the next message: a new code.
    rmSync(join(dir, 'paired'), { recursive: true });
    const again = agentSide.check('pi');
    assert.ok(!again.paired && 'code' in again);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test.run();
