// telemetry.schema.json `spec` (spec §5.11). 0.3.0 adds world_model_ops / planning_ops events and
// prediction_error / retrieval_hit_rate / plan_revision_count metrics; otherwise identical.
// The schema's `default`s are annotations only: nothing is filled in here (the loader applies defaults).
import * as v from 'valibot';
import { secretRef } from './definitions.ts';
import { bool, int, int1, nonEmptyArray, str, strict, unit, lazySchema } from './helpers.ts';

export const EXPORTER_TYPES = ['otlp', 'file', 'sqlite', 'webhook', 'console'] as const;

// Built on first use, not at import (docs/startup.md): a `claw run` whose manifest has no such primitive
// never constructs these valibot schemas (~830 were built before the first reply, most for primitives the
// manifest did not have).
const build = () => {
  const flag = v.optional(bool);

  const exporter = strict({
    type: v.picklist(EXPORTER_TYPES),
    endpoint: v.optional(str),
    path: v.optional(str),
    auth: v.optional(strict({ secret_ref: v.optional(secretRef) })),
    batch: v.optional(strict({ max_size: v.optional(int1), flush_interval_ms: v.optional(int(100)) })),
  });

  const events02 = { tool_calls: flag, memory_ops: flag, swarm_ops: flag, lifecycle: flag, errors: flag };
  const metrics02 = { token_usage: flag, cost_usd: flag, latency_histogram: flag };

  const telemetryEntries = {
    exporters: nonEmptyArray(exporter),
    sampling: v.optional(strict({ rate: v.optional(unit) })),
    redaction: v.optional(strict({ strip_arguments: flag, strip_results: flag })),
  };

  const telemetrySpec02 = strict({
    ...telemetryEntries,
    events: v.optional(strict(events02)),
    metrics: v.optional(strict(metrics02)),
  });

  const telemetrySpec03 = strict({
    ...telemetryEntries,
    events: v.optional(strict({ ...events02, world_model_ops: flag, planning_ops: flag })),
    metrics: v.optional(
      strict({ ...metrics02, prediction_error: flag, retrieval_hit_rate: flag, plan_revision_count: flag }),
    ),
  });
  return { telemetrySpec02, telemetrySpec03 };
};
let built: ReturnType<typeof build> | undefined;
const parts = () => (built ??= build());

export const telemetrySpec02 = lazySchema(() => parts().telemetrySpec02);
export const telemetrySpec03 = lazySchema(() => parts().telemetrySpec03);
