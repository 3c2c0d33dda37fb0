// tool.schema.json `spec` (spec §5.4) — identical in 0.2.0 and 0.3.0.
import * as v from 'valibot';
import { BACKOFF } from './provider.ts';
import { anyObject, bool, int0, int1, loose, nonEmpty, requiring, str, strict, type RequiredWhen, lazySchema } from './helpers.ts';

// if: { not: { required: [mcp_source] } } then: { required: [description, input_schema] }
const withoutMcp = (key: string): RequiredWhen => [
  key,
  (t) => t.mcp_source === undefined,
  `${key} is required when mcp_source is absent`,
];

// Built on first use, not at import (docs/startup.md): a `claw run` whose manifest has no such primitive
// never constructs these valibot schemas (~830 were built before the first reply, most for primitives the
// manifest did not have).
const build = () => {
  const toolSpec = requiring(
    strict({
      description: v.optional(nonEmpty),
      input_schema: v.optional(anyObject),
      output_schema: v.optional(anyObject),
      sandbox_ref: v.optional(str),
      policy_ref: v.optional(str),
      mcp_source: v.optional(strict({ uri: nonEmpty, tool_name: v.optional(str) })),
      // MCP tool annotations: additionalProperties: true.
      annotations: v.optional(
        loose({
          readOnlyHint: v.optional(bool),
          destructiveHint: v.optional(bool),
          idempotentHint: v.optional(bool),
          openWorldHint: v.optional(bool),
        }),
      ),
      timeout_ms: v.optional(int0),
      retry: v.optional(strict({ max_attempts: v.optional(int1), backoff: v.optional(v.picklist(BACKOFF)) })),
      composite: v.optional(bool),
      skill_ref: v.optional(nonEmpty),
    }),
    [withoutMcp('description'), withoutMcp('input_schema')],
  );
  return { toolSpec };
};
let built: ReturnType<typeof build> | undefined;
const parts = () => (built ??= build());

export const toolSpec = lazySchema(() => parts().toolSpec);
