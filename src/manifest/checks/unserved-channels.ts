// Channels this runtime declares valid (spec §5.3 lists 20 types) but does not serve. A manifest that
// declares one is refused at STARTING (src/runtime/channels-module.ts) and flagged by `claw validate` as
// a warning (docs/channels.md "What this runtime serves"): a channel that is accepted and then silently
// serves nobody is worse than one that fails loudly.
import type { ResolvedManifest } from '../resolved.ts';

/** Channel types served here: the terminal, queues, Telegram, and `custom` for the Home Assistant device. */
export const SERVED_CHANNEL_TYPES: Readonly<Record<string, string>> = {
  cli: 'claw chat',
  queue: 'an fs inbox or an MQTT topic bound in claw.runtime.yaml',
  telegram: 'the Bot API with long polling',
  custom: 'the Home Assistant MQTT device bound in claw.runtime.yaml',
  webhook: 'the A2A endpoint (a2a.enabled in claw.runtime.yaml): its callers are the channel\'s users',
};

/** The one transport each served type runs over (spec §5.3 `transport`). */
const SERVED_TRANSPORTS: Readonly<Record<string, readonly string[]>> = {
  cli: ['stdio'],
  queue: ['polling'],
  // Long polling: no inbound port, the board stays behind NAT.
  telegram: ['polling'],
  custom: ['polling'],
  // A2A requests arrive on the runtime's HTTP listener: inbound HTTP calls, the spec's `webhook` transport.
  webhook: ['webhook'],
};

/** Trigger fields each served type reads; any other is a promise nobody keeps (cron, imap, db-trigger fields). */
const SERVED_TRIGGER: Readonly<Record<string, readonly string[]>> = {
  cli: ['max_parallel', 'overlap_policy'],
  queue: ['queue_name', 'max_parallel', 'overlap_policy'],
  telegram: ['max_parallel', 'overlap_policy'],
  custom: ['max_parallel', 'overlap_policy'],
  webhook: [],
};

/** Features no served channel implements: declaring one true would promise what nobody does. */
const UNSERVED_FEATURES = ['voice', 'files', 'reactions', 'threads', 'inline_images'] as const;

export interface UnservedProblem {
  channel: string;
  /** Path inside the Channel's `spec`. */
  path: string[];
  message: string;
}

type SpecLike = {
  type?: unknown;
  transport?: unknown;
  features?: Record<string, unknown>;
  trigger?: Record<string, unknown>;
  processing?: { read_receipts?: unknown; typing_indicator?: unknown };
};

export function unservedChannelProblems(m: Pick<ResolvedManifest, 'channels'>): UnservedProblem[] {
  const out: UnservedProblem[] = [];
  for (const ch of m.channels) {
    const s = (ch.spec ?? {}) as SpecLike;
    const type = String(s.type);
    const add = (path: string[], message: string) => out.push({ channel: ch.name, path, message: `channel ${ch.name}: ${message}` });
    if (!Object.hasOwn(SERVED_CHANNEL_TYPES, type)) {
      add(['type'], `type ${type} is not served by this runtime (served: ${Object.keys(SERVED_CHANNEL_TYPES).join(', ')})`);
      continue;
    }
    const transports = SERVED_TRANSPORTS[type];
    if (!transports.includes(String(s.transport))) add(['transport'], `transport ${String(s.transport)} is not served for type ${type} (served: ${transports.join(', ')})`);
    for (const k of Object.keys(s.trigger ?? {})) {
      if (s.trigger![k] !== undefined && !SERVED_TRIGGER[type].includes(k)) add(['trigger', k], `trigger.${k} is not served for type ${type}`);
    }
    for (const f of UNSERVED_FEATURES) if (s.features?.[f] === true) add(['features', f], `features.${f} is not served by this runtime`);
    if (s.processing?.read_receipts === true) add(['processing', 'read_receipts'], 'processing.read_receipts is not served by this runtime');
    if (s.processing?.typing_indicator === true && type !== 'telegram') add(['processing', 'typing_indicator'], `processing.typing_indicator is not served for type ${type} (only telegram shows one)`);
  }
  return out;
}

/** Served only when claw.runtime.yaml binds them (where the bot token goes, which broker): unbound, they would serve nobody. */
const NEEDS_BINDING: Readonly<Record<string, string>> = {
  telegram: 'telegram: {}',
  custom: 'home_assistant: { broker: mqtt://host:1883 }',
};

/** `a2aEnabled`: claw.runtime.yaml `a2a.enabled`, which serves the `webhook` Channel (docs/a2a.md "Security"). */
export function unboundChannelProblems(m: Pick<ResolvedManifest, 'channels'>, bindings: Readonly<Record<string, unknown>>, a2aEnabled = false): UnservedProblem[] {
  const out: UnservedProblem[] = [];
  for (const ch of m.channels) {
    const type = String((ch.spec as SpecLike | undefined)?.type);
    if (type === 'webhook' && !a2aEnabled) {
      out.push({ channel: ch.name, path: ['type'], message: `channel ${ch.name}: type webhook is served only as the A2A endpoint (claw.runtime.yaml a2a: { enabled: true })` });
      continue;
    }
    if (!Object.hasOwn(NEEDS_BINDING, type) || Object.hasOwn(bindings, ch.name)) continue;
    out.push({
      channel: ch.name,
      path: ['type'],
      message: `channel ${ch.name}: type ${type} is served only when bound in claw.runtime.yaml (channels: { ${ch.name}: { ${NEEDS_BINDING[type]} } })`,
    });
  }
  return out;
}
