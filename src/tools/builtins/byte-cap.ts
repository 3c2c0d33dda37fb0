// How many bytes a builtin that reads (file-read, http-fetch) may hold for one call. `max_bytes` is an
// argument the model writes, and the manifest's input_schema, which replaces the builtin's own, need
// not bound it: without a ceiling one call asking for 2 GB of a large file or an endless response
// holds all of it in the runtime's memory (twice, once decoded) on a board of 256 MB. The ceiling is
// the sandbox's resource_limits.max_output_bytes (spec §5.8), the most the result may carry anyway.
import type { SandboxSpec } from '../../manifest/schema/index.ts';
import { DEFAULT_MAX_OUTPUT_BYTES, limit } from '../../sandbox/spec-view.ts';

/** `requested` when it is a positive whole number no larger than the output cap; else the default or the cap. */
export function readCap(requested: unknown, sandbox: SandboxSpec, fallback: number): number {
  const ceiling = limit(sandbox, 'max_output_bytes') ?? DEFAULT_MAX_OUTPUT_BYTES;
  const asked = typeof requested === 'number' && Number.isFinite(requested) && requested >= 1 ? Math.floor(requested) : fallback;
  return Math.min(asked, ceiling);
}
