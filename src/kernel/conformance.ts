// Conformance levels (spec §11): what a manifest declares and what this runtime implements.
// An agent's level is the lower of the two; methods above it answer -32601 (§11 method table).
import type { ResolvedManifest } from '../manifest/resolved.ts';

export type Level = 1 | 2 | 3;
export const levelName = (l: Level) => `level-${l}` as const;

/** §11 required primitives: L2 = Identity, Provider, Channel, Tool, Sandbox, Policy; L3 = all 9 core. */
export function manifestLevel(m: ResolvedManifest): Level {
  const l2 = m.channels.length > 0 && m.tools.length > 0 && m.sandbox !== undefined && m.policies.length > 0;
  if (!l2) return 1;
  const l3 = m.skills.length > 0 && m.memory !== undefined && m.swarm !== undefined;
  return l3 ? 3 : 2;
}

/** Capability groups of §9.3.1 and the level whose methods make up each group. */
export const CAPABILITY_GROUPS = { tools: 2, swarm: 3, memory: 3 } as const;
export type CapabilityGroup = keyof typeof CAPABILITY_GROUPS;

/**
 * §9.3.1: an empty request object is unrestricted (answer every group we support); otherwise the
 * answer is the intersection of the requested groups and what we support.
 */
export function negotiateCapabilities(requested: Record<string, unknown>, supported: readonly CapabilityGroup[]): Record<string, object> {
  const unrestricted = Object.keys(requested).length === 0;
  const out: Record<string, object> = {};
  for (const g of supported) if (unrestricted || g in requested) out[g] = {};
  return out;
}
