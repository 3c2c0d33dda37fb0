// The CLI user and a manifest's `type: cli` channel (runtime profile §3; docs/channels.md "claw chat").
// `claw chat` calls the gate for every line with the local OS user as the sender id. Without a cli
// Channel in the manifest the channel is the implicit one: transport-scoped to the process owner, no
// access_control (profile §3 says not to serialize one), so there is no gate at all.
import { nodeCrypto } from '../node/lazy.ts';
import type { ResolvedManifest, ResolvedPrimitive } from '../manifest/resolved.ts';
import { createChannelGate, type AccessVerdict, type ChannelGate } from './access.ts';
import { filePairingStorage, pairingDir } from './pairing-store.ts';
import type { ChannelSpec } from './types.ts';

export interface GateContext {
  dataDir: string;
  clock: { now(): number; monotonic(): number };
}

/** The manifest's first `type: cli` channel, if it declares one. */
export function cliChannelOf(m: Pick<ResolvedManifest, 'channels'>): ResolvedPrimitive | undefined {
  return m.channels.find((c) => (c.spec as ChannelSpec).type === 'cli');
}

/** A gate for one declared channel; pairings are kept under data_dir/channels/{name}/pairing. */
export function gateForChannel(ch: ResolvedPrimitive, ctx: GateContext): ChannelGate {
  const spec = ch.spec as ChannelSpec;
  return createChannelGate(ch.name, spec, {
    now: ctx.clock.now,
    monotonic: ctx.clock.monotonic,
    randomInt: (max) => nodeCrypto().randomInt(max),
    pairing: spec.access_control?.mode === 'pairing' ? filePairingStorage(pairingDir(ctx.dataDir, ch.name)) : undefined,
  });
}

/**
 * For `claw chat`: the gate of the manifest's cli channel (keep it for the whole chat: rate limits count
 * across lines), or undefined for the implicit channel (every line passes, tools on, no approvals role).
 */
export function cliGate(m: Pick<ResolvedManifest, 'channels'>, ctx: GateContext): ChannelGate | undefined {
  const ch = cliChannelOf(m);
  return ch ? gateForChannel(ch, ctx) : undefined;
}

/** One-shot check of `userId` on `channel` (a fresh gate: no rate-limit history). */
export function checkChannelUser(channel: ResolvedPrimitive, userId: string, text: string, ctx: GateContext): AccessVerdict {
  return gateForChannel(channel, ctx).check(userId, text);
}
