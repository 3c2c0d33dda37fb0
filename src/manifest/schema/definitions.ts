// `definitions.schema.json` ($defs) — identical in 0.2.0 and 0.3.0 except `protocolVersion`
// (and the `kind` enum, which no schema references: each document pins its own `kind` const).
import * as v from 'valibot';
import type { SchemaGeneration } from '../kinds.ts';
import { anyObject, lazySchema, loose, nonEmpty, realSchema, stringMap } from './helpers.ts';
import { parseVersion } from '../../protocol/semver.ts';

/** A `claw` version of CKP 0.<minor>.x (any patch, any pre-release). */
const ofMinor = (s: string, minor: string) => {
  const m = parseVersion(s);
  return m !== undefined && m.major === '0' && m.minor === minor;
};

// Each built on first use (helpers.ts lazySchema): a start whose launch manifest comes from the manifest cache
// validates nothing (docs/startup.md). Builders nest the real schemas (realSchema), not the proxies.

/** $defs/semver */
export const semver = lazySchema(() =>
  v.pipe(v.string(), v.regex(/^[0-9]+\.[0-9]+\.[0-9]+(-.+)?$/, 'must be a semantic version, e.g. "1.2.0" or "1.2.0-beta.1"')),
);

/** $defs/kebabName */
export const kebabName = lazySchema(() =>
  v.pipe(
    v.string(),
    v.regex(/^[a-zA-Z0-9]([a-zA-Z0-9-]{0,62})$/, 'must be 1-63 letters, digits or hyphens, not starting with a hyphen (spec §7 name)'),
  ),
);

/** $defs/secretRef */
export const secretRef = nonEmpty;

/** $defs/durationString */
export const durationString = lazySchema(() =>
  v.pipe(v.string(), v.regex(/^[0-9]+(s|m|h|d)$/, 'must be a whole number followed by s, m, h or d, e.g. "90d"')),
);

/**
 * $defs/protocolVersion. The official schemas pin `const: "0.3.0"` / `"0.2.0"`; we deliberately
 * accept every patch (and pre-release) of the same minor. Spec §1.5: PATCH releases are editorial
 * with no behavioral change, so a `claw: "0.3.2"` document has exactly the 0.3.0 shape and
 * rejecting it would break manifests on every spec erratum. MINOR releases add fields (0.2 → 0.3
 * added WorldModel, memory roles, ...), so each minor is its own schema generation.
 */
export const protocolVersion: Record<SchemaGeneration, v.GenericSchema<unknown, string>> = {
  '0.2': lazySchema(() => v.pipe(v.string(), v.check((s: string) => ofMinor(s, '2'), 'must be a CKP 0.2.x version, e.g. "0.2.0"'))),
  '0.3': lazySchema(() => v.pipe(v.string(), v.check((s: string) => ofMinor(s, '3'), 'must be a CKP 0.3.x version, e.g. "0.3.0"'))),
};

const metadataEntries = () => ({
  name: realSchema(kebabName),
  version: v.optional(realSchema(semver)),
  labels: v.optional(stringMap),
  annotations: v.optional(anyObject),
});

/** $defs/metadata — primitives' `metadata` (unknown keys allowed). */
export const metadata = lazySchema(() => loose(metadataEntries()));

/** The Claw manifest's `metadata`: $defs/metadata plus `description` (claw.schema.json inlines it). */
export const clawMetadata = lazySchema(() => loose({ ...metadataEntries(), description: v.optional(v.string()) }));
