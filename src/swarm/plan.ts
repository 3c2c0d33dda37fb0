// The Swarm primitive (spec §5.10) read once into the numbers the coordinator uses, with the
// defaults docs/swarm.md states for every optional field.
import type { SwarmSpec } from '../manifest/schema/index.ts';

export type Topology = SwarmSpec['topology'];
export type Strategy = SwarmSpec['aggregation']['strategy'];

export interface SwarmPlan {
  swarm: string;
  topology: Topology;
  strategy: Strategy;
  /** identity → role, in manifest order (pipeline stages and hierarchy tiers follow it). */
  members: { identity: string; role: string }[];
  maxParallel: number;
  sequentialWithinAgent: boolean;
  /** Whole operation deadline: aggregation.timeout_ms capped by resource_limits.max_duration_ms. */
  timeoutMs: number;
  retryPerAgent: number;
  deadLetter: { enabled: boolean; maxRetries: number };
  breaker?: { threshold: number; resetMs: number };
  maxTotalTokens?: number;
}

export const DEFAULTS = {
  maxParallel: 4,
  timeoutMs: 600_000,
  deadLetterMaxRetries: 5,
  breakerThreshold: 3,
  breakerResetMs: 60_000,
} as const;

export function planOf(name: string, spec: SwarmSpec): SwarmPlan {
  const f = spec.failure;
  const timeouts = [spec.aggregation.timeout_ms, spec.resource_limits?.max_duration_ms].filter((x): x is number => typeof x === 'number' && x > 0);
  return {
    swarm: name,
    topology: spec.topology,
    strategy: spec.aggregation.strategy,
    members: spec.agents.map((a) => ({ identity: a.identity_ref, role: a.role })),
    maxParallel: spec.coordination.concurrency.max_parallel ?? DEFAULTS.maxParallel,
    sequentialWithinAgent: spec.coordination.concurrency.sequential_within_agent ?? false,
    timeoutMs: timeouts.length ? Math.min(...timeouts) : DEFAULTS.timeoutMs,
    retryPerAgent: f?.retry_per_agent ?? 0,
    deadLetter: { enabled: f?.dead_letter?.enabled ?? false, maxRetries: f?.dead_letter?.max_retries ?? DEFAULTS.deadLetterMaxRetries },
    breaker: f?.circuit_breaker
      ? { threshold: f.circuit_breaker.failure_threshold ?? DEFAULTS.breakerThreshold, resetMs: f.circuit_breaker.reset_timeout_ms ?? DEFAULTS.breakerResetMs }
      : undefined,
    maxTotalTokens: spec.resource_limits?.max_total_tokens,
  };
}

/** This agent's role: its agents[] entry, or 'peer' when the swarm does not list it. */
export function roleOf(plan: SwarmPlan, identity: string): string {
  return plan.members.find((m) => m.identity === identity)?.role ?? 'peer';
}

export const isMember = (plan: SwarmPlan, identity: string) => plan.members.some((m) => m.identity === identity);
