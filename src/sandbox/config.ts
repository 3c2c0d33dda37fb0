// The `sandbox:` section for claw.runtime.yaml (this machine's settings, not the portable manifest):
// which downgrades the operator allows (levels.ts) and the SIGTERM → SIGKILL grace (runtime profile
// §10). Part of src/config/runtime-config.ts.
import * as v from 'valibot';
import { lazySchema } from '../manifest/schema/helpers.ts';
import { validateDowngrades } from './levels.ts';

export const sandboxRuntimeConfigSchema = lazySchema(() => v.strictObject({
  allow_downgrade: v.optional(
    v.pipe(
      v.record(v.string(), v.string()),
      v.check((m) => validateDowngrades(m).length === 0, (issue) => validateDowngrades(issue.input as Record<string, string>).join('; ')),
    ),
  ),
  kill_grace_ms: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(60_000))),
}));

export type SandboxRuntimeConfig = v.InferOutput<typeof sandboxRuntimeConfigSchema>;
