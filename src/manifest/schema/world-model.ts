// world-model.schema.json `spec` (spec §5.7) — new in 0.3.0.
import * as v from 'valibot';
import { bool, nonEmpty, strict, lazySchema } from './helpers.ts';

// Built on first use, not at import (docs/startup.md): a `claw run` whose manifest has no such primitive
// never constructs these valibot schemas (~830 were built before the first reply, most for primitives the
// manifest did not have).
const build = () => {
  const worldModelSpec = strict({
    paradigm: v.picklist(['implicit', 'explicit', 'simulator', 'hybrid']),
    scope: v.optional(v.picklist(['agent-wide', 'task-scoped'])),
    memory_ref: v.optional(nonEmpty),
    backend: strict({ type: v.picklist(['tool', 'provider', 'custom']), ref: nonEmpty }),
    predicts: v.optional(
      strict({ state: v.optional(bool), observation: v.optional(bool), risk: v.optional(bool), cost: v.optional(bool) }),
    ),
    planning: v.optional(
      strict({
        horizon: v.optional(v.picklist(['adaptive', 'bounded', 'fixed'])),
        uncertainty_mode: v.optional(v.picklist(['none', 'bounded', 'calibrated'])),
        fallback: v.optional(v.picklist(['conservative', 'retry', 'escalate'])),
      }),
    ),
    update: v.optional(
      strict({
        mode: v.optional(v.picklist(['online', 'batch', 'hybrid'])),
        evidence: v.optional(v.picklist(['observations', 'observations+outcomes'])),
      }),
    ),
    constraints: v.optional(strict({ policy_ref: v.optional(nonEmpty) })),
  });
  return { worldModelSpec };
};
let built: ReturnType<typeof build> | undefined;
const parts = () => (built ??= build());

export const worldModelSpec = lazySchema(() => parts().worldModelSpec);
