// Who an A2A caller is and what it may do (CKP-A2A profile §8; docs/a2a.md "Security"). A2A requests are untrusted
// input: the HTTP listener authenticates them (a bearer token or a client certificate), and the caller is then a
// user of the manifest's one `webhook` Channel, through the same gate every channel uses (channels/access.ts:
// length, per-user rate limit, allowlist / roles / pairing); the Policy's prompt-injection patterns scan the text.
import type { ResolvedManifest } from '../manifest/resolved.ts';
import type { ChannelGate } from '../channels/access.ts';
import type { ChannelSpec } from '../channels/types.ts';
import type { Logger } from '../kernel/ports.ts';
import { detectInjection } from '../policy/prompt-injection.ts';
import type { PolicySpec } from '../manifest/schema/index.ts';
import { ClawError, ErrorCode, ProtocolError } from '../protocol/errors.ts';
import { NoCaller, TooManyRequests } from './errors.ts';

/** The channel type A2A callers belong to: requests arrive as inbound HTTP calls (spec §5.3 `webhook`). */
export const A2A_CHANNEL_TYPE = 'webhook';
/** The user of an unauthenticated listener (loopback only, docs/transports.md): whoever runs on this machine. */
export const LOCAL_CALLER = 'local';

/**
 * Who a request on an A2A route is: the listener's principal (a token ref, `cn:<CN>`); `local` only where the
 * listener has no credentials. Authenticated without a principal: NoCaller, refused 401 (never `local`).
 */
export function callerOf(ctx: { principal?: string; authenticated?: boolean }): string {
  const c = ctx.principal ?? (ctx.authenticated ? undefined : LOCAL_CALLER);
  if (c === undefined) throw new NoCaller();
  return c;
}

/** What a caller's message is allowed to do. */
export type Admission =
  | { run: true; tools: boolean }
  | { run: false; state: 'rejected' | 'auth_required'; message: string };

export interface A2aAccess {
  /** The webhook Channel's name: the turn's channel, part of every conversation key. */
  readonly channel: string;
  /** Throws for a malformed message (`task.invalid_input`) or a caller over its rate (TooManyRequests). */
  admit(user: string, text: string): Admission;
}

/** The manifest's webhook Channel, or the STARTING refusal naming what to declare (docs/channels.md: no silent channels). */
export function a2aChannelOf(m: Pick<ResolvedManifest, 'channels'>): { name: string; spec: ChannelSpec } {
  const found = m.channels.filter((c) => (c.spec as ChannelSpec | undefined)?.type === A2A_CHANNEL_TYPE);
  if (found.length !== 1) {
    const why = found.length === 0 ? 'the manifest declares no Channel of type webhook' : `the manifest declares ${found.length} Channels of type webhook (${found.map((c) => c.name).join(', ')}); A2A serves exactly one`;
    throw new ProtocolError(
      ErrorCode.InvalidParams,
      `Invalid params: a2a is enabled but ${why}. A2A callers are users of one Channel: declare { type: webhook, transport: webhook, auth: { secret_ref: … }, access_control: … } (see docs/a2a.md, "Security")`,
      { state: 'ERROR', channel_type: A2A_CHANNEL_TYPE, declared: found.map((c) => c.name) },
    );
  }
  return { name: found[0].name, spec: found[0].spec as ChannelSpec };
}

export function createA2aAccess(o: { channel: string; gate: ChannelGate; policies: readonly { name: string; spec: unknown }[]; log: Logger }): A2aAccess {
  return {
    channel: o.channel,
    admit(user, text) {
      const v = o.gate.check(user, text);
      if (!v.allow) {
        if (v.reason === 'rate_limited') throw new TooManyRequests(v.message, Math.max(1, Math.ceil(Number(v.data.retry_after_ms) / 1000) || 1));
        if (v.reason === 'pairing_required' || v.reason === 'pairing_full') return { run: false, state: 'auth_required', message: v.message };
        if (v.reason === 'not_allowed') return { run: false, state: 'rejected', message: v.message };
        throw new ClawError('task.invalid_input', v.message);
      }
      // Profile §8: A2A text is untrusted input, scanned as the Policy scans tool input (its prompt_injection block).
      for (const p of o.policies) {
        const cfg = (p.spec as PolicySpec | undefined)?.prompt_injection;
        const inj = detectInjection(text, cfg);
        if (inj.matched.length === 0) continue;
        const patterns = inj.matched.map((x) => x.pattern);
        if (inj.action === 'block-and-log') {
          o.log.warn('prompt injection blocked in an A2A message', { channel: o.channel, policy: p.name, patterns });
          return { run: false, state: 'rejected', message: `refused (${ErrorCode.PolicyDenied}): the message looks like a prompt injection` };
        }
        o.log[inj.action === 'warn' ? 'warn' : 'info']('prompt injection pattern in an A2A message', { channel: o.channel, policy: p.name, patterns });
      }
      return { run: true, tools: v.tools };
    },
  };
}
