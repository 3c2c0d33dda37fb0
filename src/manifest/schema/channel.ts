// channel.schema.json `spec` (spec §5.3) — identical in 0.2.0 and 0.3.0.
import * as v from 'valibot';
import { secretRef } from './definitions.ts';
import { bool, int1, nonEmpty, nonEmptyArray, requiring, str, strList, strict, type RequiredWhen, lazySchema } from './helpers.ts';

export const CHANNEL_TYPES = [
  'telegram', 'discord', 'whatsapp', 'slack', 'email', 'webhook', 'cli', 'voice', 'web', 'lark',
  'matrix', 'line', 'wechat', 'qq', 'dingtalk', 'cron', 'queue', 'imap', 'db-trigger', 'custom',
] as const;
export const ACCESS_MODES = ['open', 'allowlist', 'pairing', 'role-based'] as const;

// allOf: [if mode = allowlist then required allowed_ids, pairing → pairing, role-based → roles].
// The schema only requires the mode's own field; the §5.3 note that the *other* field MUST NOT be
// present (test vectors TV-L3-04/05) is not in the JSON Schema and is left to semantic checks.
const needs = (mode: string, key: string): RequiredWhen => [
  key,
  (a) => a.mode === mode,
  `${key} is required when mode is "${mode}"`,
];

// Built on first use, not at import (docs/startup.md): a `claw run` whose manifest has no such primitive
// never constructs these valibot schemas (~830 were built before the first reply, most for primitives the
// manifest did not have).
const build = () => {
  const accessControl = requiring(
    strict({
      mode: v.picklist(ACCESS_MODES),
      allowed_ids: v.optional(strList),
      pairing: v.optional(strict({ code_expiry_minutes: int1, max_pending: int1 })),
      roles: v.optional(v.array(strict({ id: str, role: v.picklist(['admin', 'user', 'viewer']) }))),
    }),
    [needs('allowlist', 'allowed_ids'), needs('pairing', 'pairing'), needs('role-based', 'roles')],
  );

  const channelSpec = strict({
    type: v.picklist(CHANNEL_TYPES),
    transport: v.picklist(['polling', 'webhook', 'websocket', 'stdio']),
    auth: strict({ secret_ref: secretRef }),
    access_control: v.optional(accessControl),
    processing: v.optional(
      strict({
        max_message_length: v.optional(int1),
        rate_limit: v.optional(strict({ messages_per_minute: v.optional(int1), burst: v.optional(int1) })),
        typing_indicator: v.optional(bool),
        read_receipts: v.optional(bool),
      }),
    ),
    features: v.optional(
      strict({
        voice: v.optional(bool),
        files: v.optional(bool),
        reactions: v.optional(bool),
        threads: v.optional(bool),
        inline_images: v.optional(bool),
      }),
    ),
    trigger: v.optional(
      strict({
        schedule: v.optional(nonEmpty),
        queue_name: v.optional(nonEmpty),
        mailbox: v.optional(nonEmpty),
        table: v.optional(nonEmpty),
        events: v.optional(nonEmptyArray(v.picklist(['INSERT', 'UPDATE', 'DELETE']))),
        max_parallel: v.optional(int1),
        overlap_policy: v.optional(v.picklist(['skip', 'queue', 'allow'])),
      }),
    ),
  });
  return { channelSpec };
};
let built: ReturnType<typeof build> | undefined;
const parts = () => (built ??= build());

export const channelSpec = lazySchema(() => parts().channelSpec);
