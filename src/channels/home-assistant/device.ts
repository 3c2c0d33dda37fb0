// A `custom` Channel served as a Home Assistant device over MQTT discovery (docs/home-assistant.md). On
// every connect: availability `online` (retained; the MQTT Last Will publishes `offline`, retained, if the
// process dies), the retained discovery configs (./discovery.ts), the current lifecycle state. A command on
// the text entity becomes a `channel.message` from the binding's `user` through the channel runner (gate,
// scheduler, turn); its answer is the `Last reply` sensor. When Home Assistant announces itself on
// `<prefix>/status` (`online`) everything is published again (at most once per REANNOUNCE_MS).
// `decommission: true` removes the device (empty retained configs) and serves nothing.
import type { Clock, InboundFrame, Logger, Transport } from '../../kernel/ports.ts';
import type { SecretResolver } from '../../kernel/secrets.ts';
import type { Lifecycle } from '../../kernel/lifecycle.ts';
import type { ResolvedManifest } from '../../manifest/resolved.ts';
import { ClawError } from '../../protocol/errors.ts';
import { MqttConnection } from '../../transports/mqtt/connection.ts';
import { resolveMqttSettings } from '../../transports/mqtt/options.ts';
import { connectionSecrets } from '../../transports/mqtt/secrets.ts';
import { parseChannelMqttUrl } from '../queue-mqtt.ts';
import type { HomeAssistantBinding } from '../config.ts';
import { deviceTopics, discoveryConfigs, stateText, HA_TEXT_MAX } from './discovery.ts';

declare const __CLAW_VERSION__: string;
const RUNTIME_VERSION = typeof __CLAW_VERSION__ === 'string' ? __CLAW_VERSION__ : '0.0.0-dev';
/** How often the lifecycle sensor looks at the agent's state (a change is published once). */
const LIFECYCLE_POLL_MS = 250;
/**
 * Birth messages closer together than this share one republish (a trailing one, so a real restart is still
 * answered): a client that may publish on `<prefix>/status` cannot turn a burst into thousands of retained publishes.
 */
const REANNOUNCE_MS = 5_000;

export interface HomeAssistantOptions {
  channel: string;
  manifest: ResolvedManifest;
  binding: HomeAssistantBinding;
  log: Logger;
  dataDir: string;
  secrets?: SecretResolver;
  lifecycle: Pick<Lifecycle, 'state'>;
  /** The republish gap is monotonic: a wall clock set back an hour would hold off the answer to a birth for an hour. */
  clock: Pick<Clock, 'monotonic'>;
  /** Least time between two republishes on birth messages (default REANNOUNCE_MS). */
  reannounceMs?: number;
}

type Answer = { result?: { reply?: string; outcome?: string; tool_calls?: number }; error?: { code: number; message: string; data?: { reason?: string } } };

export async function openHomeAssistantDevice(o: HomeAssistantOptions): Promise<Transport> {
  const { channel, log, binding: b } = o;
  const t = deviceTopics(b, o.manifest.name);
  const configs = discoveryConfigs(t, o.manifest, RUNTIME_VERSION);
  const user = b.user ?? 'home-assistant';
  let endpoint;
  try {
    endpoint = parseChannelMqttUrl(b.broker, 'unused').endpoint;
  } catch (e) {
    throw new ClawError('config', `channel ${channel}: home_assistant.broker: ${(e as Error).message}`);
  }
  const settings = resolveMqttSettings(endpoint, b.mqtt);
  const { password, ca } = await connectionSecrets(settings, { secrets: o.secrets, baseDir: o.dataDir });
  let deliver: ((f: InboundFrame) => void) | undefined;
  const backlog: string[] = [];
  let open = true;
  let lastState: string | undefined;
  let timer: ReturnType<typeof setInterval> | undefined;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((r) => (resolveClosed = r));
  let seq = 0;
  let announcedAt = -Infinity;
  let reannounce: ReturnType<typeof setTimeout> | undefined;

  const publish = (topic: string, payload: string, retain: boolean) =>
    conn.publish(topic, payload, { retain }).catch((e: Error) => log.warn('home assistant publish failed', { channel, topic, error: e.message }));

  const announce = () => {
    announcedAt = o.clock.monotonic();
    if (b.decommission) {
      for (const c of configs) void publish(c.topic, '', true);
      for (const topic of [t.availability, t.replyState, t.replyAttributes, t.lifecycle]) void publish(topic, '', true);
      log.info('home assistant device removed (decommission: true)', { channel, node_id: t.node });
      return;
    }
    for (const c of configs) void publish(c.topic, JSON.stringify(c.payload), true);
    void publish(t.availability, 'online', true);
    lastState = o.lifecycle.state;
    void publish(t.lifecycle, lastState, true);
  };

  /** A birth message: republish now, or once when the last republish is recent (a burst joins the due one). */
  const onBirth = () => {
    if (reannounce) return;
    reannounce = setTimeout(() => {
      reannounce = undefined;
      if (open) announce();
    }, Math.max(0, announcedAt + (o.reannounceMs ?? REANNOUNCE_MS) - o.clock.monotonic()));
  };

  const onCommand = (text: string) => {
    const frame: InboundFrame = {
      payload: { text: JSON.stringify({ jsonrpc: '2.0', id: `ha-${++seq}`, method: 'channel.message', params: { from: user, text } }) },
      reply: (r) => {
        const m = (Array.isArray(r) ? r[0] : r) as Answer;
        const reply = m.result ? String(m.result.reply ?? '') : (m.error?.message ?? 'Internal error');
        const at = new Date().toISOString();
        const attrs = m.result
          ? { reply, outcome: m.result.outcome, tool_calls: m.result.tool_calls, command: text, at }
          : { reply, error: { code: m.error?.code, reason: m.error?.data?.reason }, command: text, at };
        // Attributes first: the state change then finds them.
        void publish(t.replyAttributes, JSON.stringify(attrs), true).then(() => publish(t.replyState, stateText(reply || ' '), true));
      },
    };
    deliver!(frame);
  };

  const conn: MqttConnection = await MqttConnection.open({
    settings,
    clientId: settings.clientId ?? `claw-ha-${t.node}`,
    // Commands are not queued for an agent that is away: a command typed while it was down is stale.
    clean: true,
    password,
    ca,
    will: { topic: t.availability, payload: 'offline', retain: true },
    log,
    onConnect: () => announce(),
    onMessage: (topic, payload) => {
      if (!open) return;
      // Bytes first: decoding and counting characters of a 100 MB command would hold the loop for seconds.
      // A character is at most 4 UTF-8 bytes, so no command within the limit is larger.
      if (payload.length > HA_TEXT_MAX * 64) return void log.info('home assistant command ignored (empty or oversized)', { channel, bytes: payload.length });
      const text = new TextDecoder().decode(payload);
      if (topic === t.haStatus) {
        // Home Assistant's birth message: it may have lost its discovered entities (restart).
        if (text === 'online') onBirth();
        return;
      }
      if (topic !== t.command || b.decommission) return;
      if (text.trim() === '' || [...text].length > HA_TEXT_MAX * 16) return void log.info('home assistant command ignored (empty or oversized)', { channel });
      if (deliver) onCommand(text);
      else backlog.push(text);
    },
  });
  await conn.subscribe(t.haStatus);
  if (!b.decommission) await conn.subscribe(t.command);

  return {
    name: `channel:${channel}`,
    closed,
    start(d) {
      deliver = d;
      for (const text of backlog.splice(0)) onCommand(text);
      timer = setInterval(() => {
        const s = o.lifecycle.state;
        if (s !== lastState && conn.connected && !b.decommission) {
          lastState = s;
          void publish(t.lifecycle, s, true);
        }
      }, LIFECYCLE_POLL_MS);
      timer.unref?.();
    },
    notify() {},
    async close() {
      open = false;
      clearInterval(timer);
      clearTimeout(reannounce);
      if (conn.connected && !b.decommission) {
        // A clean disconnect sends no Last Will: say offline ourselves, with the state we stop in.
        await Promise.all([publish(t.lifecycle, 'STOPPED', true), publish(t.availability, 'offline', true)]);
      }
      await conn.close({ graceMs: 2000 }).catch(() => {});
      resolveClosed();
    },
  };
}
