// claw.runtime.yaml `swarm:` (docs/swarm.md): where this machine's agents meet their peers and
// the timings of the bus. Kept out of the manifest so it stays valid against the official schemas.
import * as v from 'valibot';
import { lazySchema } from '../manifest/schema/helpers.ts';

/** Built inside the lazy schemas below, not at import. */
const ms = () => v.pipe(v.number(), v.integer(), v.minValue(1));

export const swarmRuntimeConfigSchema = lazySchema(() => v.strictObject({
  /** `fs:/dir` (registry + inboxes), `mqtt://host:port[/prefix]` / `mqtts://…`, or `memory` (this process only). */
  bus: v.pipe(v.string(), v.regex(/^(fs:.|mqtts?:\/\/.|memory$)/, 'must be fs:/dir, mqtt://host[:port], mqtts://host[:port] or memory')),
  /** How often presence is re-announced. Default 1000. */
  presence_interval_ms: v.optional(ms()),
  /** Presence older than this reads `unavailable`. Default 3 × presence_interval_ms. */
  stale_after_ms: v.optional(ms()),
  /** How long a peer has to acknowledge a delegation or a report. Default 5000. */
  ack_timeout_ms: v.optional(ms()),
  /** Retry backoff min(initial·2^n, max) (runtime profile §5). Defaults 1000 / 30000. */
  retry_initial_ms: v.optional(ms()),
  retry_max_ms: v.optional(ms()),
  /** fs bus: the inbox's polling interval under fs.watch. Default 100. */
  poll_interval_ms: v.optional(ms()),
  /**
   * MQTT bus: the MQTT transport's connection options (docs/transports.md: protocol_version,
   * username, password_ref, ca_file, tls_verify, keepalive_s, reconnect…), checked when the bus opens.
   */
  mqtt: v.optional(v.record(v.string(), v.unknown())),
}));

export type SwarmRuntimeConfig = v.InferOutput<typeof swarmRuntimeConfigSchema>;

export const SWARM_DEFAULTS = {
  presence_interval_ms: 1000,
  ack_timeout_ms: 5000,
  retry_initial_ms: 1000,
  retry_max_ms: 30_000,
  poll_interval_ms: 100,
} as const;
