// swarm.schema.json `spec` (spec §5.10) — identical in 0.2.0 and 0.3.0.
import * as v from 'valibot';
import { bool, int0, int1, nonEmptyArray, num0, str, strict, lazySchema } from './helpers.ts';

export const TOPOLOGIES = ['leader-worker', 'peer-to-peer', 'pipeline', 'broadcast', 'hierarchical'] as const;

// Built on first use, not at import (docs/startup.md): a `claw run` whose manifest has no such primitive
// never constructs these valibot schemas (~830 were built before the first reply, most for primitives the
// manifest did not have).
const build = () => {
  const swarmSpec = strict({
    topology: v.picklist(TOPOLOGIES),
    agents: nonEmptyArray(strict({ identity_ref: str, role: str, provider_ref: v.optional(str), count: v.optional(int1) })),
    coordination: strict({
      message_passing: v.picklist(['queue', 'shared-memory', 'event-bus', 'direct']),
      backend: v.picklist(['sqlite-wal', 'redis', 'nats', 'in-process']),
      concurrency: strict({ max_parallel: v.optional(int1), sequential_within_agent: v.optional(bool) }),
    }),
    aggregation: strict({
      strategy: v.picklist(['leader-decides', 'majority-vote', 'merge', 'chain', 'best-of-n']),
      cost_aware: v.optional(bool),
      timeout_ms: v.optional(int0),
    }),
    failure: v.optional(
      strict({
        retry_per_agent: v.optional(int0),
        dead_letter: v.optional(strict({ enabled: v.optional(bool), max_retries: v.optional(int0) })),
        circuit_breaker: v.optional(strict({ failure_threshold: v.optional(int1), reset_timeout_ms: v.optional(int0) })),
      }),
    ),
    resource_limits: v.optional(
      strict({ max_total_tokens: v.optional(int0), max_total_cost_usd: v.optional(num0), max_duration_ms: v.optional(int0) }),
    ),
  });
  return { swarmSpec };
};
let built: ReturnType<typeof build> | undefined;
const parts = () => (built ??= build());

export const swarmSpec = lazySchema(() => parts().swarmSpec);
