// memory.schema.json `spec` (spec §5.6). 0.3.0 adds the cognitive store fields (role, lifecycle,
// forgetting, salience, confidence); otherwise identical.
import * as v from 'valibot';
import { durationString } from './definitions.ts';
import { bool, int1, nonEmpty, nonEmptyArray, str, strList, strict, lazySchema, realSchema } from './helpers.ts';

export const STORE_TYPES = ['conversation', 'semantic', 'key-value', 'workspace', 'checkpoint'] as const;
const SCOPES = ['global', 'per-identity', 'per-channel'] as const;

// Built on first use, not at import (docs/startup.md): a `claw run` whose manifest has no such primitive
// never constructs these valibot schemas (~830 were built before the first reply, most for primitives the
// manifest did not have).
const build = () => {
  const storeEntries02 = {
    name: nonEmpty,
    type: v.picklist(STORE_TYPES),
    backend: v.optional(v.picklist(['sqlite', 'postgresql', 'filesystem', 'sqlite-vec', 'pgvector', 'qdrant', 'custom'])),
    retention: v.optional(strict({ max_age: v.optional(realSchema(durationString)), max_entries: v.optional(int1) })),
    compaction: v.optional(
      strict({ enabled: v.optional(bool), strategy: v.optional(v.picklist(['summarize', 'truncate', 'sliding-window'])) }),
    ),
    embedding: v.optional(strict({ provider_ref: str, model: str, dimensions: int1 })),
    search: v.optional(
      strict({
        strategy: v.optional(v.picklist(['vector-only', 'fts-only', 'hybrid'])),
        fusion: v.optional(v.picklist(['reciprocal-rank', 'linear-combination'])),
        top_k: v.optional(int1),
      }),
    ),
    scope: v.optional(v.picklist(SCOPES)),
    encryption: v.optional(bool),
    path: v.optional(str),
    isolation: v.optional(v.picklist(['shared', 'per-identity', 'per-channel'])),
    max_size_mb: v.optional(int1),
    checkpoint: v.optional(strict({ max_snapshots: v.optional(int1), ttl: v.optional(realSchema(durationString)) })),
  };

  const storeEntries03 = {
    ...storeEntries02,
    role: v.optional(v.picklist(['sensory', 'working', 'episodic', 'semantic', 'procedural'])),
    lifecycle: v.optional(
      strict({
        acquisition: v.optional(v.picklist(['event-driven', 'continuous', 'manual'])),
        consolidation: v.optional(v.picklist(['none', 'summarize', 'merge', 'adaptive'])),
        retrieval: v.optional(v.picklist(['exact', 'semantic', 'contextual', 'hybrid'])),
      }),
    ),
    forgetting: v.optional(
      strict({ strategy: v.optional(v.picklist(['none', 'decay', 'summarize', 'adaptive'])), signals: v.optional(strList) }),
    ),
    salience: v.optional(strict({ enabled: v.optional(bool), signals: v.optional(strList) })),
    confidence: v.optional(
      strict({ source_tracking: v.optional(bool), decay: v.optional(v.picklist(['optional', 'none', 'adaptive'])) }),
    ),
  };

  const memorySpec02 = strict({ stores: nonEmptyArray(strict(storeEntries02)) });
  const memorySpec03 = strict({ stores: nonEmptyArray(strict(storeEntries03)) });
  return { memorySpec02, memorySpec03 };
};
let built: ReturnType<typeof build> | undefined;
const parts = () => (built ??= build());

export const memorySpec02 = lazySchema(() => parts().memorySpec02);
export const memorySpec03 = lazySchema(() => parts().memorySpec03);
