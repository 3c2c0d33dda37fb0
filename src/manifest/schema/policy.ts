// policy.schema.json `spec` (spec §5.9) — identical in 0.2.0 and 0.3.0.
import * as v from 'valibot';
import { durationString } from './definitions.ts';
import { anyObject, bool, int0, int1, loose, nonEmpty, nonEmptyArray, num0, str, strict, lazySchema, realSchema } from './helpers.ts';

export const RULE_ACTIONS = ['allow', 'deny', 'require-approval', 'audit-only'] as const;
export const RULE_SCOPES = ['tool', 'category', 'all'] as const;

// Built on first use, not at import (docs/startup.md): a `claw run` whose manifest has no such primitive
// never constructs these valibot schemas (~830 were built before the first reply, most for primitives the
// manifest did not have).
const build = () => {
  const rule = strict({
    id: nonEmpty,
    action: v.picklist(RULE_ACTIONS),
    scope: v.picklist(RULE_SCOPES),
    match: v.optional(strict({ annotations: v.optional(anyObject), category: v.optional(str) })),
    reason: v.optional(str),
    approval: v.optional(
      strict({ timeout_seconds: v.optional(int1), default_if_timeout: v.optional(v.picklist(['deny', 'allow'])) }),
    ),
    // additionalProperties: true
    conditions: v.optional(loose({ path_within: v.optional(str) })),
    rate_limit: v.optional(strict({ cost_per_day_usd: v.optional(num0), tokens_per_day: v.optional(int0) })),
  });

  const policySpec = strict({
    rules: nonEmptyArray(rule),
    prompt_injection: v.optional(
      strict({
        detection: v.optional(v.picklist(['pattern', 'llm-based', 'hybrid', 'none'])),
        pattern_engine: v.optional(str),
        pattern_count: v.optional(int0),
        action: v.optional(v.picklist(['block-and-log', 'warn', 'log-only', 'ignore'])),
      }),
    ),
    secret_scanning: v.optional(
      strict({
        enabled: v.optional(bool),
        scope: v.optional(v.picklist(['input', 'output', 'both'])),
        patterns: v.optional(int0),
        action: v.optional(v.picklist(['redact', 'block', 'warn'])),
      }),
    ),
    input_validation: v.optional(
      strict({
        max_size_bytes: v.optional(int0),
        null_byte_detection: v.optional(bool),
        whitespace_analysis: v.optional(bool),
        encoding: v.optional(str),
      }),
    ),
    rate_limits: v.optional(
      strict({ tool_calls_per_minute: v.optional(int0), tokens_per_hour: v.optional(int0), cost_per_day_usd: v.optional(num0) }),
    ),
    audit: v.optional(
      strict({
        log_inputs: v.optional(bool),
        log_outputs: v.optional(bool),
        log_approvals: v.optional(bool),
        retention: v.optional(realSchema(durationString)),
        destination: v.optional(v.picklist(['file', 'sqlite', 'webhook', 'syslog'])),
      }),
    ),
  });
  return { policySpec };
};
let built: ReturnType<typeof build> | undefined;
const parts = () => (built ??= build());

export const policySpec = lazySchema(() => parts().policySpec);
