// The broker connection the MQTT builtins use (docs/tools.md "mqtt-publish / mqtt-read"), from
// claw.runtime.yaml `mqtt_tools:`. One short-lived connection per call (connect, act, disconnect): a home
// agent publishes a few messages per turn, and nothing is left open between turns or after a session.
// The password comes only from `mqtt.password_ref` (a secret_ref), as for every MQTT connection here.
import type { Logger } from '../../kernel/ports.ts';
import type { SecretResolver } from '../../kernel/secrets.ts';
import { resolveMqttSettings } from '../../transports/mqtt/options.ts';
import type { MqttToolsConfig } from './mqtt-config.ts';
import { connectionSecrets } from '../../transports/mqtt/secrets.ts';
import { parseChannelMqttUrl } from '../../channels/queue-mqtt.ts';

export interface MqttToolPort {
  readonly config: MqttToolsConfig;
  /** The broker's host, for the sandbox's network rules. */
  readonly host: string;
  publish(topic: string, payload: string, retain: boolean, signal?: AbortSignal): Promise<void>;
  /** The retained value of `topic`, or undefined when none arrives within the timeout. */
  readRetained(topic: string, timeoutMs: number, signal?: AbortSignal): Promise<string | undefined>;
}

/**
 * How long a call waits for the broker: for its CONNACK, then again for the PUBACK or SUBACK. A broker that took
 * the connection and then went quiet (a board whose Wi-Fi dropped right after connecting, a broker wedged under
 * load) otherwise held the call, and the agent's turn with it, for as long as the tool had no timeout_ms: forever
 * by default, as mqtt.js keeps an unacknowledged QoS 1 publish queued and resends it at every reconnect.
 */
export const BROKER_WAIT_MS = 10_000;

export function mqttToolPort(config: MqttToolsConfig, d: { secrets?: SecretResolver; baseDir: string; log: Logger; brokerWaitMs?: number }): MqttToolPort {
  const waitMs = d.brokerWaitMs ?? BROKER_WAIT_MS;
  const { endpoint } = parseChannelMqttUrl(config.broker, 'unused');
  const settings = resolveMqttSettings(endpoint, config.mqtt);
  let seq = 0;
  const withConnection = async <T>(onMessage: (topic: string, payload: Uint8Array) => void, act: (c: import('../../transports/mqtt/connection.ts').MqttConnection) => Promise<T>, signal?: AbortSignal): Promise<T> => {
    const { MqttConnection } = await import('../../transports/mqtt/connection.ts');
    const { password, ca } = await connectionSecrets(settings, { secrets: d.secrets, baseDir: d.baseDir });
    const conn = await MqttConnection.open({
      settings,
      clientId: `${settings.clientId ?? 'claw-tool'}-${process.pid}-${++seq}`,
      clean: true,
      password,
      ca,
      log: d.log,
      onMessage: (t, p) => onMessage(t, p),
    });
    const abort = () => void conn.close({ graceMs: 0 });
    signal?.addEventListener('abort', abort, { once: true });
    try {
      await conn.ready(waitMs);
      return await act(conn);
    } finally {
      signal?.removeEventListener('abort', abort);
      await conn.close({ graceMs: 1000 }).catch(() => {});
    }
  };
  return {
    config,
    host: endpoint.host,
    publish: (topic, payload, retain, signal) =>
      withConnection(() => {}, (c) => within(c.publish(topic, payload, { retain }), waitMs, `no PUBACK from the MQTT broker within ${waitMs} ms: the message may not have arrived`), signal),
    readRetained(topic, timeoutMs, signal) {
      let got: ((v: string) => void) | undefined;
      const value = new Promise<string>((r) => (got = r));
      return withConnection(
        (t, p) => t === topic && got?.(new TextDecoder().decode(p)),
        async (c) => {
          await within(c.subscribe(topic), waitMs, `no SUBACK from the MQTT broker within ${waitMs} ms`);
          // A retained message comes right after SUBACK; none within the timeout means there is none.
          let timer: ReturnType<typeof setTimeout> | undefined;
          const none = new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), timeoutMs)));
          try {
            return await Promise.race([value, none]);
          } finally {
            clearTimeout(timer);
          }
        },
        signal,
      );
    },
  };
}

/** `p`, or an error once `ms` have passed (the connection is closed by the caller either way). */
function within<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
