// The eleven CKP primitives (spec §5) plus the root `Claw` manifest (§6).
export const PRIMITIVE_KINDS = [
  'Identity',
  'Provider',
  'Channel',
  'Tool',
  'Skill',
  'Memory',
  'WorldModel',
  'Sandbox',
  'Policy',
  'Swarm',
  'Telemetry',
] as const;
export type PrimitiveKind = (typeof PRIMITIVE_KINDS)[number];
export type DocumentKind = PrimitiveKind | 'Claw';

/** Schema generations we understand: `claw: "0.2.x"` and `claw: "0.3.x"`. */
export type SchemaGeneration = '0.2' | '0.3';

/** Kinds that do not exist in a generation (WorldModel arrived in 0.3.0). */
export function kindExistsIn(kind: DocumentKind, gen: SchemaGeneration): boolean {
  return !(kind === 'WorldModel' && gen === '0.2');
}

/** Spec section of each primitive, for error messages (`(spec §5.4)`). */
export const SPEC_SECTION: Record<DocumentKind, string> = {
  Identity: '§5.1',
  Provider: '§5.2',
  Channel: '§5.3',
  Tool: '§5.4',
  Skill: '§5.5',
  Memory: '§5.6',
  WorldModel: '§5.7',
  Sandbox: '§5.8',
  Policy: '§5.9',
  Swarm: '§5.10',
  Telemetry: '§5.11',
  Claw: '§6',
};

/** URI kind segment (spec §7 ABNF `kind`) for each primitive kind. */
export const URI_KIND: Record<PrimitiveKind, string> = {
  Identity: 'identity',
  Provider: 'provider',
  Channel: 'channel',
  Tool: 'tool',
  Skill: 'skill',
  Memory: 'memory',
  WorldModel: 'world-model',
  Sandbox: 'sandbox',
  Policy: 'policy',
  Swarm: 'swarm',
  Telemetry: 'telemetry',
};
