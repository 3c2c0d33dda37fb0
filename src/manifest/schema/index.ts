// CKP document schemas (valibot), one generation per supported minor: 0.2.x and 0.3.x.
// They mirror the official JSON Schemas (spec/schema*/); test/unit/schema.test.ts proves it
// differentially. Deliberate differences: `claw` accepts any patch of the minor (definitions.ts),
// and `format: uri` is checked permissively (helpers.ts).
//
// Types: the 0.3 schemas are the source of truth ("schemas are the types"). Every 0.2 spec is a
// strict subset of its 0.3 counterpart (0.3 only adds optional fields and WorldModel), so a
// document validated against 0.2 can be read through the 0.3 types with no incompatible field.
import * as v from 'valibot';
import type { DocumentKind, PrimitiveKind, SchemaGeneration } from '../kinds.ts';
import { clawSpec02, clawSpec03 } from './claw.ts';
import { channelSpec } from './channel.ts';
import { clawMetadata, metadata, protocolVersion } from './definitions.ts';
import { anyObject, realSchema, strict } from './helpers.ts';
import { identitySpec } from './identity.ts';
import { memorySpec02, memorySpec03 } from './memory.ts';
import { policySpec } from './policy.ts';
import { providerSpec } from './provider.ts';
import { sandboxSpec } from './sandbox.ts';
import { skillSpec02, skillSpec03 } from './skill.ts';
import { swarmSpec } from './swarm.ts';
import { telemetrySpec02, telemetrySpec03 } from './telemetry.ts';
import { toolSpec } from './tool.ts';
import { worldModelSpec } from './world-model.ts';

export type Metadata = v.InferOutput<typeof metadata>;
export type ClawMetadata = v.InferOutput<typeof clawMetadata>;
export type IdentitySpec = v.InferOutput<typeof identitySpec>;
export type ProviderSpec = v.InferOutput<typeof providerSpec>;
export type ChannelSpec = v.InferOutput<typeof channelSpec>;
export type ToolSpec = v.InferOutput<typeof toolSpec>;
export type SkillSpec = v.InferOutput<typeof skillSpec03>;
export type MemorySpec = v.InferOutput<typeof memorySpec03>;
export type WorldModelSpec = v.InferOutput<typeof worldModelSpec>;
export type SandboxSpec = v.InferOutput<typeof sandboxSpec>;
export type PolicySpec = v.InferOutput<typeof policySpec>;
export type SwarmSpec = v.InferOutput<typeof swarmSpec>;
export type TelemetrySpec = v.InferOutput<typeof telemetrySpec03>;
export type ClawSpec = v.InferOutput<typeof clawSpec03>;

/** Spec type of each primitive kind (0.3 shapes; 0.2 documents fit them too). */
export interface SpecByKind {
  Identity: IdentitySpec;
  Provider: ProviderSpec;
  Channel: ChannelSpec;
  Tool: ToolSpec;
  Skill: SkillSpec;
  Memory: MemorySpec;
  WorldModel: WorldModelSpec;
  Sandbox: SandboxSpec;
  Policy: PolicySpec;
  Swarm: SwarmSpec;
  Telemetry: TelemetrySpec;
}

export { kebabName, semver } from './definitions.ts';

// WorldModel does not exist in 0.2.0 (there is no world-model.schema.json for it).
const notIn02 = v.never('WorldModel is not a CKP 0.2 kind (added in 0.3.0)');

const common = {
  Identity: identitySpec,
  Provider: providerSpec,
  Channel: channelSpec,
  Tool: toolSpec,
  Sandbox: sandboxSpec,
  Policy: policySpec,
  Swarm: swarmSpec,
};

// Most of these are lazySchema proxies (built when first read); specSchema() returns the real schema.
const SPECS: Record<SchemaGeneration, Record<PrimitiveKind, v.GenericSchema>> = {
  '0.2': { ...common, Skill: skillSpec02, Memory: memorySpec02, WorldModel: notIn02, Telemetry: telemetrySpec02 },
  '0.3': { ...common, Skill: skillSpec03, Memory: memorySpec03, WorldModel: worldModelSpec, Telemetry: telemetrySpec03 },
};

/**
 * Just the `spec` object of a primitive (used to validate inline primitives, spec §6.1).
 * `('0.2', 'WorldModel')` gives a schema that rejects everything with a clear message.
 */
export function specSchema(gen: SchemaGeneration, kind: PrimitiveKind): v.GenericSchema {
  return realSchema(SPECS[gen][kind]);
}

const documents = new Map<string, v.GenericSchema>();

/**
 * Whole document `{claw, kind, metadata, spec}` for a primitive or the root Claw manifest.
 * `claw` accepts any `0.2.x` / `0.3.x` of `gen`. `('0.2', 'WorldModel')` rejects with an issue on `kind`.
 */
export function documentSchema(gen: SchemaGeneration, kind: DocumentKind): v.GenericSchema {
  const key = `${gen}/${kind}`;
  let schema = documents.get(key);
  if (!schema) {
    const claw = kind === 'Claw';
    schema =
      gen === '0.2' && kind === 'WorldModel'
        ? v.pipe(anyObject, v.looseObject({ kind: notIn02 }))
        : strict({
            claw: realSchema(protocolVersion[gen]),
            kind: v.literal(kind),
            metadata: realSchema(claw ? clawMetadata : metadata),
            spec: realSchema(claw ? (gen === '0.2' ? clawSpec02 : clawSpec03) : SPECS[gen][kind]),
          });
    documents.set(key, schema);
  }
  return schema;
}
