// The slots of a Claw manifest's `spec` (spec §6) and which primitive kind each holds.
import type { PrimitiveKind } from './kinds.ts';
import type { ResolvedManifest } from './resolved.ts';

export interface Slot {
  key: string;
  kind: PrimitiveKind;
  many: boolean;
  field: keyof ResolvedManifest;
}

export const SLOTS: readonly Slot[] = [
  { key: 'identity', kind: 'Identity', many: false, field: 'identity' },
  { key: 'providers', kind: 'Provider', many: true, field: 'providers' },
  { key: 'channels', kind: 'Channel', many: true, field: 'channels' },
  { key: 'tools', kind: 'Tool', many: true, field: 'tools' },
  { key: 'skills', kind: 'Skill', many: true, field: 'skills' },
  { key: 'memory', kind: 'Memory', many: false, field: 'memory' },
  { key: 'world_models', kind: 'WorldModel', many: true, field: 'worldModels' },
  { key: 'sandbox', kind: 'Sandbox', many: false, field: 'sandbox' },
  { key: 'policies', kind: 'Policy', many: true, field: 'policies' },
  { key: 'swarm', kind: 'Swarm', many: false, field: 'swarm' },
  { key: 'telemetry', kind: 'Telemetry', many: false, field: 'telemetry' },
];
