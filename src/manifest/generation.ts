// Which schema generation a document's `claw` field selects. We read 0.2.x and 0.3.x; any other
// major or minor is rejected (the contract), patch and pre-release are free.
import type { SchemaGeneration } from './kinds.ts';
import { parseVersion } from '../protocol/semver.ts';

export const SUPPORTED_GENERATIONS: readonly SchemaGeneration[] = ['0.3', '0.2'];

export type GenerationResult = { ok: true; gen: SchemaGeneration } | { ok: false; message: string };

export function generationOf(claw: unknown): GenerationResult {
  if (claw === undefined) return { ok: false, message: 'missing required field "claw" (the CKP version, e.g. "0.3.0")' };
  if (typeof claw !== 'string') return { ok: false, message: `"claw" must be a version string like "0.3.0", got ${typeof claw}` };
  const m = parseVersion(claw);
  if (!m) return { ok: false, message: `"claw" must be a semantic version like "0.3.0", got "${claw}"` };
  const gen = `${m.major}.${m.minor}` as SchemaGeneration;
  if (!SUPPORTED_GENERATIONS.includes(gen)) {
    return { ok: false, message: `CKP version "${claw}" is not supported: this runtime reads 0.2.x and 0.3.x manifests` };
  }
  return { ok: true, gen };
}
