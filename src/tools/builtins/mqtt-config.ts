// claw.runtime.yaml `mqtt_tools:`: the broker and topic allowlists of the mqtt-publish / mqtt-read builtins
// (docs/tools.md). Kept apart from the connection code so loading the configuration schema loads no MQTT.
import * as v from 'valibot';
import { lazySchema } from '../../manifest/schema/helpers.ts';
import { mqttOptionsSchema } from '../../transports/mqtt/options.ts';

/** MQTT §4.7.1: `+` fills a whole level, `#` is the whole last level. */
const isFilter = (f: string) => !f.includes('\u0000') && f.split('/').every((l, i, all) => l === '+' || (l === '#' && i === all.length - 1) || !/[+#]/.test(l));
const filter = () => v.pipe(v.string(), v.minLength(1), v.check(isFilter, 'must be an MQTT topic filter (+ a whole level, # the last level)'));

export const mqttToolsConfigSchema = lazySchema(() => v.strictObject({
  /** `mqtt[s]://[user@]host[:port]`. Its host must also be allowed by the tool's sandbox network rules. */
  broker: v.pipe(v.string(), v.regex(/^mqtts?:\/\/[^/?#]+\/?$/, 'must be mqtt://host[:port]')),
  mqtt: v.optional(mqttOptionsSchema),
  /** Topic filters mqtt-publish may publish to; nothing else. Default: none. */
  publish: v.optional(v.array(filter())),
  /** Topic filters mqtt-read may read the retained value of. Default: none. */
  read: v.optional(v.array(filter())),
  /** Largest payload mqtt-publish sends (default 65536 bytes). */
  max_payload_bytes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(256 * 1024 * 1024))),
  /** How long mqtt-read waits for a retained value (default 2000 ms). */
  read_timeout_ms: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(60_000))),
}));
export type MqttToolsConfig = v.InferOutput<typeof mqttToolsConfigSchema>;

