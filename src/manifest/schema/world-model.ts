// world-model.schema.json `spec` (spec §5.7) — new in 0.3.0.
import * as v from 'valibot';
import { bool, nonEmpty, strict } from './helpers.ts';

export const worldModelSpec = strict({
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
