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

export function mqttToolPort(config: MqttToolsConfig, d: { secrets?: SecretResolver; baseDir: string; log: Logger }): MqttToolPort {
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
      await conn.ready(10_000);
      return await act(conn);
    } finally {
      signal?.removeEventListener('abort', abort);
      await conn.close({ graceMs: 1000 }).catch(() => {});
    }
  };
  return {
    config,
    host: endpoint.host,
    publish: (topic, payload, retain, signal) => withConnection(() => {}, (c) => c.publish(topic, payload, { retain }), signal),
    readRetained(topic, timeoutMs, signal) {
      let got: ((v: string) => void) | undefined;
      const value = new Promise<string>((r) => (got = r));
      return withConnection(
        (t, p) => t === topic && got?.(new TextDecoder().decode(p)),
        async (c) => {
          await c.subscribe(topic);
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
