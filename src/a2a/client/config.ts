// claw.runtime.yaml `a2a.peers`: remote A2A agents this agent may talk to, by agent card URL
// (docs/a2a.md "Client"). Credentials only by secret_ref; the manifest stays portable.
import * as v from 'valibot';
import { lazySchema } from '../../manifest/schema/helpers.ts';

export const a2aPeersSchema = lazySchema(() =>
  v.pipe(
    v.array(
      v.strictObject({
        /** What the a2a-send tool's `peer` argument names. */
        name: v.pipe(v.string(), v.regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'must be 1-64 characters of A-Z a-z 0-9 _ . -')),
        /** The agent card (`…/.well-known/agent-card.json`), or the agent's base URL. */
        card_url: v.pipe(v.string(), v.regex(/^https?:\/\/[^\s]+$/, 'must be an http(s) URL')),
        /** `Authorization: Bearer <secret>` on the peer's A2A endpoint (never on the public card). */
        auth: v.optional(v.strictObject({ secret_ref: v.pipe(v.string(), v.minLength(1)) })),
        /** The peer may be on a loopback address (127.0.0.0/8, ::1); other private ranges stay refused. */
        allow_loopback: v.optional(v.boolean()),
        /** Deadline of one exchange, following the task included (default 120000). */
        timeout_ms: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1000), v.maxValue(3_600_000))),
        /** What one task's artifacts may hold in all, appends included (default 1048576). */
        max_result_bytes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1024), v.maxValue(64 * 1024 * 1024))),
        /** How many artifacts one task may have (default 100). */
        max_artifacts: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(10_000))),
      }),
    ),
    v.check((peers) => new Set(peers.map((p) => p.name)).size === peers.length, 'peer names must be unique'),
  ),
);

export type A2aPeerConfig = v.InferOutput<typeof a2aPeersSchema>[number];
