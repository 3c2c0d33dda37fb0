// claw.runtime.yaml `channels:` (docs/channels.md): a queue Channel says *what* it consumes
// (`trigger.queue_name`); this machine says *where*: a filesystem inbox or an MQTT broker (`listen:`).
// A telegram Channel is bound with `telegram:` (API URL, network allowlist), the Home Assistant device
// (a `custom` Channel) with `home_assistant:` (broker, discovery prefix). Like `transports:`, kept out
// of the manifest so the manifest stays valid against the official schemas.
import * as v from 'valibot';
import { lazySchema } from '../manifest/schema/helpers.ts';
import { fsTransportOptionsSchema } from '../transports/fs/options.ts';
import { mqttOptionsSchema } from '../transports/mqtt/options.ts';

const positiveInt = () => v.pipe(v.number(), v.integer(), v.minValue(1));

/** The network guard's settings for a channel's own outbound requests (same shape as a Sandbox's `network`). */
const channelNetworkSchema = () => v.strictObject({
  mode: v.optional(v.picklist(['deny', 'allowlist', 'allow-all'])),
  allowed_hosts: v.optional(v.array(v.pipe(v.string(), v.minLength(1)))),
  ssrf_protection: v.optional(v.strictObject({ enabled: v.optional(v.boolean()), block_private_ips: v.optional(v.boolean()), dns_pinning: v.optional(v.boolean()) })),
});

/** `type: telegram` (docs/channels.md "Telegram"). */
export const telegramBindingSchema = lazySchema(() => v.strictObject({
  /** Bot API base URL (default https://api.telegram.org); tests point it at a fake server on loopback. */
  api_url: v.optional(v.pipe(v.string(), v.regex(/^https?:\/\/[^/?#]+(\/[^?#]*)?$/, 'must be an http(s) URL without query'))),
  /** getUpdates long-poll timeout in seconds (default 30). */
  poll_timeout_s: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(50))),
  /** Backoff after a network error or a 5xx (default 1000 → 60000 ms, doubling). */
  retry: v.optional(v.strictObject({ initial_delay_ms: v.optional(positiveInt()), max_delay_ms: v.optional(positiveInt()) })),
  /** Default: allowlist of the api_url host, SSRF protection on. The api_url host must be allowed. */
  network: v.optional(channelNetworkSchema()),
}));
export type TelegramBinding = v.InferOutput<typeof telegramBindingSchema>;

/** A `custom` Channel served as a Home Assistant device over MQTT discovery (docs/home-assistant.md). */
export const homeAssistantBindingSchema = lazySchema(() => v.strictObject({
  /** `mqtt[s]://[user@]host[:port]` of the broker Home Assistant uses. */
  broker: v.pipe(v.string(), v.regex(/^mqtts?:\/\/[^/?#]+\/?$/, 'must be mqtt://host[:port]')),
  mqtt: v.optional(mqttOptionsSchema),
  /** Home Assistant's discovery prefix (default `homeassistant`). */
  discovery_prefix: v.optional(v.pipe(v.string(), v.regex(/^[^+#\u0000/][^+#\u0000]*$/, 'must be a topic without wildcards'))),
  /** Device id in topics and unique_ids (default: the manifest's name); [a-zA-Z0-9_-]. */
  node_id: v.optional(v.pipe(v.string(), v.regex(/^[a-zA-Z0-9_-]{1,64}$/, 'must be 1-64 of a-z A-Z 0-9 _ -'))),
  /** Where the device's own state and command topics live (default `claw/{node_id}`). */
  base_topic: v.optional(v.pipe(v.string(), v.regex(/^[^+#\u0000/][^+#\u0000]*[^/]$/, 'must be a topic without wildcards'))),
  /** The sender id the access gate sees for commands from Home Assistant (default `home-assistant`). */
  user: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(256))),
  /** Publish empty retained configs and leave (the agent is decommissioned). Default false. */
  decommission: v.optional(v.boolean()),
}));
export type HomeAssistantBinding = v.InferOutput<typeof homeAssistantBindingSchema>;

export const channelBindingSchema = lazySchema(() => v.strictObject({
  /** Queue channels: `fs:/dir` (inbox directory, the fs transport's layout) or `mqtt[s]://host[:port][/topic]`. */
  listen: v.optional(v.pipe(v.string(), v.regex(/^(fs|mqtts?):./, 'must be fs:/dir or mqtt://host[:port][/topic]'))),
  telegram: v.optional(telegramBindingSchema),
  home_assistant: v.optional(homeAssistantBindingSchema),
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
