// skill.schema.json `spec` (spec §5.5). 0.3.0 adds `world_model_ref`; otherwise identical.
import * as v from 'valibot';
import { anyObject, bool, int0, nonEmpty, nonEmptyArray, str, strict } from './helpers.ts';

const skillEntries02 = {
  description: nonEmpty,
  tools_required: nonEmptyArray(str),
  instruction: nonEmpty,
  input_schema: v.optional(anyObject),
  output_schema: v.optional(anyObject),
  permissions: v.optional(
    strict({
      network: v.optional(bool),
      filesystem: v.optional(v.picklist(['none', 'read-only', 'write-workspace', 'full'])),
      approval_required: v.optional(bool),
    }),
  ),
  estimates: v.optional(
    strict({ avg_tokens: v.optional(int0), avg_duration_seconds: v.optional(int0), avg_tool_calls: v.optional(int0) }),
  ),
};

export const skillSpec02 = strict(skillEntries02);
export const skillSpec03 = strict({ ...skillEntries02, world_model_ref: v.optional(nonEmpty) });
