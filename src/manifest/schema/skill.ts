// skill.schema.json `spec` (spec §5.5). 0.3.0 adds `world_model_ref`; otherwise identical.
import * as v from 'valibot';
import { anyObject, bool, int0, nonEmpty, nonEmptyArray, str, strict, lazySchema } from './helpers.ts';

// Built on first use, not at import (docs/startup.md): a `claw run` whose manifest has no such primitive
// never constructs these valibot schemas (~830 were built before the first reply, most for primitives the
// manifest did not have).
const build = () => {
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

  const skillSpec02 = strict(skillEntries02);
  const skillSpec03 = strict({ ...skillEntries02, world_model_ref: v.optional(nonEmpty) });
  return { skillSpec02, skillSpec03 };
};
let built: ReturnType<typeof build> | undefined;
const parts = () => (built ??= build());

export const skillSpec02 = lazySchema(() => parts().skillSpec02);
export const skillSpec03 = lazySchema(() => parts().skillSpec03);
