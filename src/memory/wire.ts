// CKP wire shapes of the memory methods (spec §9.3.4). Invalid params → -32602 with the issues (docs/protocol.md).
// Extensions (documented in docs/memory.md): `entries[].timestamp`; `context.identity` / `context.channel`
// pick the partition of a per-identity / per-channel store; query `time_range` bounds may each be open.
import * as v from 'valibot';
import { jsonObject } from '../protocol/json-object.ts';

const name = v.pipe(v.string(), v.minLength(1));
const object = jsonObject;
const content = v.union([v.string(), object], 'must be a string or an object');
const partition = {
  identity: v.optional(name),
  channel: v.optional(name),
};

export const memoryStoreParams = v.object({
  store: name,
  entries: v.pipe(
    v.array(
      v.object({
        content,
        key: v.optional(name),
        metadata: v.optional(object),
        timestamp: v.optional(v.string()),
      }),
    ),
    v.minLength(1, 'must hold at least one entry'),
  ),
  // §9.3.4: context.request_id is REQUIRED (idempotency, runtime profile §5).
  context: v.object({ request_id: name, ...partition }),
});

export const memoryQueryParams = v.object({
  store: name,
  query: v.object({
    type: v.picklist(['semantic', 'key', 'time-range'], 'must be one of semantic, key, time-range'),
    text: v.optional(v.string()),
    key: v.optional(name),
    time_range: v.optional(v.object({ from: v.optional(v.string()), to: v.optional(v.string()) })),
    // A safe integer: SQLite's LIMIT takes no larger (1e21 was a `datatype mismatch`, answered -32031).
    top_k: v.optional(v.pipe(v.number(), v.safeInteger(), v.minValue(1))),
  }),
  context: v.optional(v.object(partition)),
});

export const memoryCompactParams = v.object({
  store: name,
  context: v.optional(v.object(partition)),
});

export type MemoryStoreParams = v.InferOutput<typeof memoryStoreParams>;
export type MemoryQueryParams = v.InferOutput<typeof memoryQueryParams>;
export type MemoryCompactParams = v.InferOutput<typeof memoryCompactParams>;
