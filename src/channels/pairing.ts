// `access_control.mode: pairing` (spec §5.3: "Unknown users receive an approval code; admin approves").
// Pure logic over an injected storage and clock (docs/channels.md "Pairing"):
//   - a paired user passes;
//   - an unknown user gets a code, valid `code_expiry_minutes`; asking again while it is valid gives the
//     same code (one pending entry per user, never a new code per message);
//   - at most `max_pending` unexpired codes exist; beyond that a new user gets no code (told to retry later);
//   - the operator approves with `claw pair <manifest> <code>` (src/cli/pair.ts → approvePairing), which
//     marks the user paired; an expired or unknown code pairs nobody.
// A code is only ever shown to the user it was issued to; denials never name other users.

export interface PendingCode {
  code: string;
  user: string;
  created_ms: number;
  expires_ms: number;
}

/** Where pairings live (src/channels/pairing-store.ts: files in data_dir). */
export interface PairingStorage {
  readPending(): PendingCode[];
  writePending(list: PendingCode[]): void;
  isPaired(user: string): boolean;
  addPaired(user: string, record: { code: string; paired_ms: number }): void;
}

export interface PairingSpec {
  code_expiry_minutes: number;
  max_pending: number;
}

export type PairingDecision =
  | { paired: true }
  | { paired: false; code: string; expiresMs: number }
  | { paired: false; full: true };

/** 32 symbols without 0/O, 1/I/L: a code read aloud or typed from a phone is hard to get wrong. */
const ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';

export function newPairingCode(randomInt: (max: number) => number): string {
  let s = '';
  for (let i = 0; i < 8; i++) s += ALPHABET[randomInt(ALPHABET.length)];
  return `${s.slice(0, 4)}-${s.slice(4)}`;
}

/**
 * A pending code is valid from its creation until its expiry, by the wall clock: the runtime hands codes
 * out and `claw pair` (another process) accepts them, so both must read the same file the same way, and
 * neither knows the other's monotonic clock. A code created "in the future" (more than a slew ahead: the
 * clock was set back since, by `date -s` or a bad NTP server) is expired — otherwise it would stay valid,
 * and hold its place in max_pending, for as long as the clock went back (docs/boards.md "Clock"). A code
 * issued at a 1970 boot expires when NTP sets the clock; the user asks again and gets a new one.
 */
export function codeLive(p: PendingCode, now: number): boolean {
  return p.created_ms - now <= SLEW_MS && now < p.expires_ms;
}
const SLEW_MS = 2_000;

/** Codes are compared without case, spaces or dashes, as people type them. */
export function normalizeCode(code: string): string {
  return code.toUpperCase().replace(/[\s-]/g, '');
}

export class Pairing {
  constructor(
    private readonly spec: PairingSpec,
    private readonly storage: PairingStorage,
    private readonly now: () => number,
    private readonly randomInt: (max: number) => number,
  ) {}

  check(user: string): PairingDecision {
    // Asked every time (one stat on disk), not cached: deleting a user's pairing takes effect at once.
    if (this.storage.isPaired(user)) {
      // Paired (by `claw pair` in another process): its pending entry is done.
      const pending = this.storage.readPending();
      if (pending.some((p) => p.user === user)) this.storage.writePending(pending.filter((p) => p.user !== user));
      return { paired: true };
    }
    const t = this.now();
    const all = this.storage.readPending();
    const live = all.filter((p) => codeLive(p, t));
    const mine = live.find((p) => p.user === user);
    if (mine) {
      if (live.length !== all.length) this.storage.writePending(live);
      return { paired: false, code: mine.code, expiresMs: mine.expires_ms };
    }
    if (live.length >= this.spec.max_pending) {
      if (live.length !== all.length) this.storage.writePending(live);
      return { paired: false, full: true };
    }
    let code = newPairingCode(this.randomInt);
    while (live.some((p) => normalizeCode(p.code) === normalizeCode(code))) code = newPairingCode(this.randomInt);
    const entry: PendingCode = { code, user, created_ms: t, expires_ms: t + this.spec.code_expiry_minutes * 60_000 };
    this.storage.writePending([...live, entry]);
    return { paired: false, code, expiresMs: entry.expires_ms };
  }
}

export type ApproveResult = { ok: true; user: string } | { ok: false; reason: 'unknown' | 'expired' };

/** The operator's side (`claw pair`): a valid pending code pairs its user. */
export function approvePairing(storage: PairingStorage, code: string, now: number): ApproveResult {
  const want = normalizeCode(code);
  const hit = storage.readPending().find((p) => normalizeCode(p.code) === want);
  if (!hit) return { ok: false, reason: 'unknown' };
  if (!codeLive(hit, now)) return { ok: false, reason: 'expired' };
  storage.addPaired(hit.user, { code: hit.code, paired_ms: now });
  return { ok: true, user: hit.user };
}
