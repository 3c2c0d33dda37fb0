// claw.runtime.yaml `channels:` (docs/channels.md "Binding a queue channel"): a queue Channel says *what*
// it consumes (`trigger.queue_name`); this machine says *where*: a filesystem inbox or an MQTT broker.
// Like `transports:`, kept out of the manifest so the manifest stays valid against the official schemas.
import * as v from 'valibot';
import { lazySchema } from '../manifest/schema/helpers.ts';
import { fsTransportOptionsSchema } from '../transports/fs/options.ts';
import { mqttOptionsSchema } from '../transports/mqtt/options.ts';

export const channelBindingSchema = lazySchema(() => v.strictObject({
  /** `fs:/dir` (inbox directory, the fs transport's layout) or `mqtt[s]://host[:port][/topic]`. */
  listen: v.pipe(v.string(), v.regex(/^(fs|mqtts?):./, 'must be fs:/dir or mqtt://host[:port][/topic]')),
  fs: v.optional(fsTransportOptionsSchema),
  mqtt: v.optional(mqttOptionsSchema),
  /** MQTT: where replies go when a message names no response topic (default `{topic}/replies`). */
  reply_topic: v.optional(v.pipe(v.string(), v.minLength(1), v.regex(/^[^+#\u0000]+$/, 'must be a topic name without wildcards'))),
  /** Messages allowed to wait under overlap_policy queue/allow (default 100); beyond, they are skipped. */
  max_queue: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(100_000))),
  /** At STOPPING, how long running turns may finish before they are cancelled (default 30000). */
  stop_grace_ms: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
}));

export type ChannelBinding = v.InferOutput<typeof channelBindingSchema>;

/** Keyed by the Channel's metadata.name. */
export const channelsConfigSchema = lazySchema(() => v.record(v.pipe(v.string(), v.minLength(1)), channelBindingSchema));
