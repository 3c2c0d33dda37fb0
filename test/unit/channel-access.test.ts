import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createChannelGate, type AccessVerdict } from '../../src/channels/access.ts';
import { ChannelRateLimiter } from '../../src/channels/rate-limit.ts';
import { approvePairing, normalizeCode, Pairing } from '../../src/channels/pairing.ts';
import { memoryPairingStorage } from '../../src/channels/pairing-store.ts';
import type { ChannelSpec } from '../../src/channels/types.ts';

const base = { type: 'queue', transport: 'polling', auth: { secret_ref: 'X' } } as const;
const clock = () => {
  let wall = 1_700_000_000_000;
  let mono = 0;
  return { now: () => wall, monotonic: () => mono, advance: (ms: number) => ((wall += ms), (mono += ms)) };
};
/** Deterministic "random": cycles through the alphabet. */
const counter = () => {
  let i = 0;
  return (max: number) => i++ % max;
};
const gate = (spec: Partial<ChannelSpec>, c = clock(), storage = memoryPairingStorage()) =>
  createChannelGate('ch', { ...base, ...spec } as ChannelSpec, { now: c.now, monotonic: c.monotonic, pairing: storage, randomInt: counter() });
const outcome = (v: AccessVerdict) => (v.allow ? `allow:${v.role}:tools=${v.tools}:approve=${v.mayApprove}` : `deny:${v.reason}:${v.code}`);

test('open: anyone passes as user with tools, without approval rights', () => {
  const g = gate({ access_control: { mode: 'open' } });
  assert.is(outcome(g.check('anyone', 'hi')), 'allow:user:tools=true:approve=false');
});

test('no access_control: a queue channel admits nobody (empty allowlist), a cli channel is open', () => {
  assert.is(outcome(gate({}).check('alice', 'hi')), 'deny:not_allowed:-32050');
  assert.is(outcome(gate({ type: 'cli', transport: 'stdio' }).check('alice', 'hi')), 'allow:user:tools=true:approve=false');
});

test('allowlist: exact, case-sensitive ids; the denial names nobody', () => {
  const g = gate({ access_control: { mode: 'allowlist', allowed_ids: ['U01ABC', 'bob'] } });
  assert.is(outcome(g.check('U01ABC', 'hi')), 'allow:user:tools=true:approve=false');
  assert.is(outcome(g.check('bob', 'hi')), 'allow:user:tools=true:approve=false');
  for (const u of ['u01abc', 'U01ABC ', 'Bob', 'mallory']) assert.is(outcome(g.check(u, 'hi')), 'deny:not_allowed:-32050', u);
  const v = g.check('mallory', 'hi');
  assert.ok(!v.allow);
  if (!v.allow) {
    assert.is(v.message, 'Channel auth failed: you are not allowed to use this channel');
    assert.equal(v.data, { channel: 'ch', reason: 'not_allowed' });
    assert.not.match(JSON.stringify(v), /U01ABC|bob/);
  }
});

test('role-based: admin approves, user has tools, viewer has none, unknown denied', () => {
  const g = gate({
    access_control: {
      mode: 'role-based',
      roles: [
        { id: 'a', role: 'admin' },
        { id: 'u', role: 'user' },
        { id: 'v', role: 'viewer' },
      ],
    },
  });
  assert.is(outcome(g.check('a', 'x')), 'allow:admin:tools=true:approve=true');
  assert.is(outcome(g.check('u', 'x')), 'allow:user:tools=true:approve=false');
  assert.is(outcome(g.check('v', 'x')), 'allow:viewer:tools=false:approve=false');
  assert.is(outcome(g.check('z', 'x')), 'deny:not_allowed:-32050');
});

test('bad sender ids and empty messages are -32602', () => {
  const g = gate({ access_control: { mode: 'open' } });
  for (const u of ['', 'a\nb', 'x'.repeat(257), 42, undefined]) assert.is(outcome(g.check(u, 'hi')), 'deny:bad_user:-32602', String(u));
  assert.is(outcome(g.check('x'.repeat(256), 'hi')), 'allow:user:tools=true:approve=false');
  assert.is(outcome(g.check('a', '')), 'deny:empty_message:-32602');
});

test('max_message_length counts code points: exactly the limit passes, one more is refused', () => {
  const g = gate({ access_control: { mode: 'open' }, processing: { max_message_length: 5 } });
  assert.is(outcome(g.check('a', 'abcde')), 'allow:user:tools=true:approve=false');
  assert.is(outcome(g.check('a', 'abcdef')), 'deny:message_too_long:-32602');
  // 5 emoji = 10 UTF-16 units, 5 code points
  assert.is(outcome(g.check('a', '😀😀😀😀😀')), 'allow:user:tools=true:approve=false');
  assert.is(outcome(g.check('a', '😀😀😀😀😀😀')), 'deny:message_too_long:-32602');
});

test('rate limit: burst at once, then one per 60000/mpm ms, per user', () => {
  const c = clock();
  const g = gate({ access_control: { mode: 'open' }, processing: { rate_limit: { messages_per_minute: 6, burst: 2 } } }, c);
  assert.is(outcome(g.check('a', '1')), 'allow:user:tools=true:approve=false');
  assert.is(outcome(g.check('a', '2')), 'allow:user:tools=true:approve=false');
  const third = g.check('a', '3');
  assert.is(outcome(third), 'deny:rate_limited:-32051');
  if (!third.allow) assert.is(third.data.retry_after_ms, 10_000);
  // another user has a bucket of their own
  assert.is(outcome(g.check('b', '1')), 'allow:user:tools=true:approve=false');
  c.advance(9_999);
  assert.is(outcome(g.check('a', '4')), 'deny:rate_limited:-32051');
  c.advance(1);
  assert.is(outcome(g.check('a', '5')), 'allow:user:tools=true:approve=false');
  assert.is(outcome(g.check('a', '6')), 'deny:rate_limited:-32051');
});

test('rate limit: a refused message takes nothing; burst defaults to messages_per_minute; burst alone is no limit', () => {
  const rl = new ChannelRateLimiter({ messages_per_minute: 60, burst: 1 });
  assert.equal(rl.take('a', 0), { ok: true });
  for (let t = 100; t < 1000; t += 100) assert.equal(rl.take('a', t), { ok: false, retryAfterMs: 1000 - t });
  assert.equal(rl.take('a', 1000), { ok: true });
  const d = new ChannelRateLimiter({ messages_per_minute: 3 });
  assert.equal([0, 0, 0, 0].map((t) => d.take('x', t).ok), [true, true, true, false]);
  const none = new ChannelRateLimiter({ burst: 1 });
  assert.is(none.enabled, false);
  assert.equal([0, 0, 0].map((t) => none.take('x', t).ok), [true, true, true]);
});

test('rate limit: memory bounded under a flood of distinct ids', () => {
  const rl = new ChannelRateLimiter({ messages_per_minute: 1, burst: 1 }, 100);
  for (let i = 0; i < 10_000; i++) rl.take(`u${i}`, i);
  assert.ok(rl.size <= 100, `size ${rl.size}`);
});

test('rate limit runs before the access check (a spammer cannot mint pairing codes)', () => {
  const storage = memoryPairingStorage();
  const g = gate({ access_control: { mode: 'pairing', pairing: { code_expiry_minutes: 10, max_pending: 5 } }, processing: { rate_limit: { messages_per_minute: 1, burst: 1 } } }, clock(), storage);
  assert.is(outcome(g.check('x', 'hi')), 'deny:pairing_required:-32050');
  assert.is(outcome(g.check('x', 'hi')), 'deny:rate_limited:-32051');
  assert.is(storage.readPending().length, 1);
});

test('allowlist and role-based: a stranger is not_allowed whatever they send (never a length or rate refusal)', () => {
  const processing = { max_message_length: 5, rate_limit: { messages_per_minute: 1, burst: 1 } };
  for (const access_control of [{ mode: 'allowlist', allowed_ids: ['a'] }, { mode: 'role-based', roles: [{ id: 'a', role: 'viewer' }] }] as const) {
    const g = gate({ access_control, processing } as any);
    for (const text of ['hi', 'hi', 'far too long', '']) assert.is(outcome(g.check('mallory', text)), 'deny:not_allowed:-32050', `${access_control.mode} ${JSON.stringify(text)}`);
    assert.is(outcome(g.check('a', 'far too long')), 'deny:message_too_long:-32602');
    assert.ok(g.check('a', 'hi').allow);
    assert.is(outcome(g.check('a', 'hi')), 'deny:rate_limited:-32051');
  }
});

test('pairing: unknown user gets a code, the same code again, the operator approves, then the user passes', () => {
  const c = clock();
  const storage = memoryPairingStorage();
  const g = gate({ access_control: { mode: 'pairing', pairing: { code_expiry_minutes: 30, max_pending: 10 } } }, c, storage);
  const first = g.check('alice', 'hi');
  assert.is(outcome(first), 'deny:pairing_required:-32050');
  if (first.allow) return;
  const code = first.data.pairing_code as string;
  assert.is(code, 'ABCD-EFGH');
  assert.is(first.data.expires_at, new Date(c.now() + 30 * 60_000).toISOString());
  assert.is(first.message, `Channel auth failed: pairing required. Ask the operator to approve code ABCD-EFGH (valid until ${first.data.expires_at})`);
  c.advance(60_000);
  const again = g.check('alice', 'hi');
  assert.ok(!again.allow && again.data.pairing_code === code, 'same code while pending');
  assert.is(storage.readPending().length, 1);
  // bob gets his own code, never alice's
  const bob = g.check('bob', 'hi');
  assert.ok(!bob.allow && bob.data.pairing_code !== code);
  assert.not.match(JSON.stringify(bob), /alice|ABCD/);
  assert.equal(approvePairing(storage, 'abcd efgh', c.now()), { ok: true, user: 'alice' });
  assert.is(outcome(g.check('alice', 'hi')), 'allow:user:tools=true:approve=false');
  assert.equal(storage.readPending().map((p) => p.user), ['bob'], 'the paired user left pending');
  assert.is(outcome(g.check('bob', 'hi')), 'deny:pairing_required:-32050');
});

test('pairing: codes expire (approval refused, a new code issued), max_pending bounds unexpired codes', () => {
  const c = clock();
  const storage = memoryPairingStorage();
  const p = new Pairing({ code_expiry_minutes: 1, max_pending: 2 }, storage, c.now, counter());
  const a = p.check('a');
  const b = p.check('b');
  assert.ok(!a.paired && 'code' in a && !b.paired && 'code' in b);
  assert.equal(p.check('c'), { paired: false, full: true });
  c.advance(60_000); // exactly the expiry: no longer valid
  if (!a.paired && 'code' in a) assert.equal(approvePairing(storage, a.code, c.now()), { ok: false, reason: 'expired' });
  assert.equal(approvePairing(storage, 'ZZZZ-ZZZZ', c.now()), { ok: false, reason: 'unknown' });
  const c2 = p.check('c');
  assert.ok(!c2.paired && 'code' in c2, 'expired codes free their places');
  assert.equal(storage.readPending().map((x) => x.user), ['c']);
  const a2 = p.check('a');
  assert.ok(!a2.paired && 'code' in a2 && 'code' in a && a2.code !== a.code, 'a new code after expiry');
  assert.is(normalizeCode(' ab-cd efgh '), 'ABCDEFGH');
});
test('pairing: the wall clock set back a year does not keep pending codes valid (nor max_pending full) for a year', () => {
  const c = clock();
  const storage = memoryPairingStorage();
  const p = new Pairing({ code_expiry_minutes: 10, max_pending: 1 }, storage, c.now, counter());
  const a = p.check('a');
  assert.ok(!a.paired && 'code' in a);
  c.advance(-365 * 86_400_000); // date -s, a bad NTP server
  if (!a.paired && 'code' in a) assert.equal(approvePairing(storage, a.code, c.now()), { ok: false, reason: 'expired' });
  const b = p.check('b');
  assert.ok(!b.paired && 'code' in b, `a place for a new user: ${JSON.stringify(b)}`);
});
test.run();
