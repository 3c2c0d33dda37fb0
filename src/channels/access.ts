// Who may talk to the agent through a channel, and how much (spec §5.3 access_control, processing;
// docs/channels.md "The gate"). One gate per channel: user id → (allowlist, role-based: the list) → length →
// rate limit → access mode. Pure apart from the injected clock and pairing storage; the same gate serves
// queue channels and `claw chat`.
import { ErrorCode } from '../protocol/errors.ts';
import { ChannelRateLimiter } from './rate-limit.ts';
import { Pairing, type PairingStorage } from './pairing.ts';
import type { ChannelSpec, Role } from './types.ts';

export type DenyReason =
  | 'bad_user'
  | 'empty_message'
  | 'message_too_long'
  | 'rate_limited'
  | 'not_allowed'
  | 'pairing_required'
  | 'pairing_full';

export type AccessVerdict =
  | {
      allow: true;
      user: string;
      role: Role;
      /** false: the turn runs with no tool (viewer, spec §5.3 roles table). */
      tools: boolean;
      /** May answer pending tool approvals through this channel (admin only). */
      mayApprove: boolean;
    }
  | {
      allow: false;
      reason: DenyReason;
      /** -32050 Channel auth failed, -32051 Channel rate limited (profile §4), -32602 for a bad message. */
      code: number;
      /** Says what to do; names no other user and no list of allowed ids. */
      message: string;
      data: Record<string, unknown>;
    };

export interface GateDeps {
  /** Monotonic milliseconds (rate limit). */
  monotonic(): number;
  /** Wall-clock milliseconds (pairing code expiry, persisted across processes). */
  now(): number;
  /** Pairing storage: required when the mode is `pairing`. */
  pairing?: PairingStorage;
  randomInt?(max: number): number;
}

export interface ChannelGate {
  readonly channel: string;
  check(user: unknown, text: string): AccessVerdict;
}

/** A user id: 1-256 characters, no control characters (it ends up in logs, file names are hashed). */
const USER_ID = /^[^\u0000-\u001f\u007f]{1,256}$/;

export function createChannelGate(channel: string, spec: Pick<ChannelSpec, 'type' | 'access_control' | 'processing'>, d: GateDeps): ChannelGate {
  const ac = spec.access_control;
  // Profile §1: without access_control the mode is implementation-defined, RECOMMENDED allowlist for remote
  // channels. Ours: `cli` (stdio, the local process owner) is open; every other type is an empty allowlist.
  const mode = ac?.mode ?? (spec.type === 'cli' ? 'open' : 'allowlist');
  const allowed = new Set(ac?.allowed_ids ?? []);
  const roles = new Map((ac?.roles ?? []).map((r) => [r.id, r.role as Role]));
  const limiter = new ChannelRateLimiter(spec.processing?.rate_limit);
  const maxLen = spec.processing?.max_message_length;
  let pairing: Pairing | undefined;
  if (mode === 'pairing') {
    if (!ac?.pairing || !d.pairing) throw new Error(`channel ${channel}: pairing mode needs its pairing block and a pairing store`);
    const randomInt = d.randomInt ?? ((max: number) => Math.floor(Math.random() * max));
    pairing = new Pairing(ac.pairing, d.pairing, d.now, randomInt);
  }

  const deny = (reason: DenyReason, code: number, message: string, data: Record<string, unknown> = {}): AccessVerdict => ({
    allow: false,
    reason,
    code,
    message,
    data: { channel, reason, ...data },
  });
  const ok = (user: string, role: Role): AccessVerdict => ({ allow: true, user, role, tools: role !== 'viewer', mayApprove: role === 'admin' });

  return {
    channel,
    check(user, text) {
      if (typeof user !== 'string' || !USER_ID.test(user)) return deny('bad_user', ErrorCode.InvalidParams, 'Invalid params: the sender id must be 1-256 characters without control characters');
      // A listed mode knows a stranger at once (one lookup): refused as such whatever they send, so that no
      // length or rate answer tells them a bot is there (a channel keeps `not_allowed` silent), and they
      // take no rate bucket. Pairing keeps the rate limit first: its check reads the pairing store.
      const listed = mode === 'allowlist' ? allowed.has(user) : mode === 'role-based' ? roles.has(user) : true;
      if (!listed) return deny('not_allowed', ErrorCode.ChannelAuthFailed, mode === 'allowlist' ? 'Channel auth failed: you are not allowed to use this channel' : 'Channel auth failed: you have no role on this channel');
      if (text.length === 0) return deny('empty_message', ErrorCode.InvalidParams, 'Invalid params: the message is empty');
      if (maxLen !== undefined) {
        // Counted in Unicode code points (what a person calls characters), not UTF-16 units or bytes.
        const n = codePoints(text, maxLen);
        if (n > maxLen) return deny('message_too_long', ErrorCode.InvalidParams, `Invalid params: the message is longer than ${maxLen} characters`, { max_message_length: maxLen });
      }
      const rate = limiter.take(user, d.monotonic());
      if (!rate.ok) {
        return deny('rate_limited', ErrorCode.ChannelRateLimited, `Channel rate limited: too many messages; try again in ${Math.ceil(rate.retryAfterMs / 1000)} s`, {
          retry_after_ms: rate.retryAfterMs,
        });
      }
      switch (mode) {
        case 'open':
          return ok(user, 'user');
        case 'allowlist':
          return ok(user, 'user');
        case 'role-based':
          return ok(user, roles.get(user)!);
        case 'pairing': {
          const p = pairing!.check(user);
          if (p.paired) return ok(user, 'user');
          if ('full' in p) return deny('pairing_full', ErrorCode.ChannelAuthFailed, 'Channel auth failed: pairing required, and too many pairing requests are pending; try again later');
          const until = new Date(p.expiresMs).toISOString();
          return deny('pairing_required', ErrorCode.ChannelAuthFailed, `Channel auth failed: pairing required. Ask the operator to approve code ${p.code} (valid until ${until})`, {
            pairing_code: p.code,
            expires_at: until,
          });
        }
      }
    },
  };
}

/** Code points of `s`, counting stops just past `limit` (a huge message is not walked to its end). */
function codePoints(s: string, limit: number): number {
  if (s.length <= limit) return s.length; // never more code points than UTF-16 units
  let n = 0;
  for (const _ of s) if (++n > limit) return n;
  return n;
}
