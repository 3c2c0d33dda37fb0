// `claw send mqtt://host[:port]/{swarm}/{agent} <method> [params]`: a TransportClient over its own connection.
// Its session is persistent while it runs (so a reply published during a broker restart is still delivered) and
// ended on close (MQTT 5 session expiry 0); on 3.1.1 it uses a clean session (a persistent one would outlive it).
import { nodeCrypto } from '../../node/lazy.ts';
import { systemClock } from '../../node/clock.ts';
import type { ClientOptions, RequestOptions, TransportClient } from '../client.ts';
import type { JsonRpcNotification } from '../../protocol/jsonrpc.ts';
import { ClawError } from '../../protocol/errors.ts';
import type { Logger } from '../../kernel/ports.ts';
import { describeEndpoint, parseMqttUrl } from './endpoint.ts';
import { resolveMqttSettings } from './options.ts';
import { connectionSecrets } from './secrets.ts';
import { MqttConnection } from './connection.ts';
import { MqttSwarmLink } from './link.ts';

const SILENT: Logger = { debug() {}, info() {}, warn() {}, error() {} };

export async function connectMqttClient(uri: string, opts: ClientOptions): Promise<TransportClient> {
  const endpoint = parseMqttUrl(uri);
  const peer = endpoint.agent;
  if (!peer) throw new ClawError('usage', `${describeEndpoint(endpoint)}: name the agent (mqtt://host/{swarm}/{agent})`);
  const settings = resolveMqttSettings(endpoint);
  // A password_ref resolves through the caller's resolver (`claw send`: the environment and $CLAW_SECRETS_DIR,
  // profile §7 steps 2-3, from the host: src/runtime/compose.ts); without one it is refused.
  const { password, ca } = await connectionSecrets(settings, { secrets: opts.secrets, baseDir: opts.baseDir });
  const clientId = settings.clientId ?? `claw-send-${(opts.sender ?? 'cli').replace(/[^A-Za-z0-9_-]/g, '_')}-${nodeCrypto().randomUUID().slice(0, 8)}`;
  const v5 = settings.protocolVersion === 5;
  let link!: MqttSwarmLink;
  const connectTimeoutMs = opts.connectTimeoutMs ?? settings.connectTimeoutMs;
  const conn = await MqttConnection.open({
    settings,
    clientId,
    clean: !v5,
    connectTimeoutMs,
    sessionExpirySeconds: 300,
    password,
    ca,
    log: opts.log ?? SILENT,
    onMessage: (topic, payload, props) => link.handle(topic, payload, props) || link.handleOutbox(topic, payload, peer),
  });
  link = new MqttSwarmLink({ connection: conn, swarm: endpoint.swarm, prefix: settings.prefix, protocolVersion: settings.protocolVersion, clientId });
  // Monotonic: a wall clock stepped back (NTP, `date -s`) would otherwise wait for as long as the step.
  const clock = opts.clock ? () => opts.clock!.monotonic() : systemClock.monotonic;
  const deadline = clock() + connectTimeoutMs;
  try {
    for (;;) {
      await conn.ready(Math.max(1, deadline - clock()));
      try {
        await link.start();
        break;
      } catch (e) {
        // The broker went away between its CONNACK and our reply subscription (a restart): the connection
        // reconnects by itself and subscribes again, so wait for it, within the same connect timeout.
        if (clock() >= deadline) throw e;
      }
    }
  } catch (e) {
    await conn.close({ endSession: true, graceMs: 200 });
    throw new ClawError('unreachable', `cannot connect to ${describeEndpoint(endpoint)}: ${(e as Error).message}`, { cause: e });
  }
  const ro = (o?: RequestOptions) => ({ timeoutMs: o?.timeoutMs, requestId: o?.requestId });
  return {
    request: (message, o) => link.request(peer, message, ro(o)) as never,
    notify: (message, o) => link.notify(peer, message, o),
    sendRaw: async (text, o) => {
      if (o?.expectReply === false) {
        await conn.publish(`${settings.prefix}/${endpoint.swarm}/${peer}/inbox`, text);
        return undefined;
      }
      return link.requestRaw(peer, text, ro(o));
    },
    onNotification(fn) {
      void link.watchOutbox(peer, (text) => {
        try {
          fn(JSON.parse(text) as JsonRpcNotification);
        } catch {
          /* not JSON: not a notification */
        }
      });
    },
    async close() {
      link.abandon();
      await conn.close({ endSession: true });
    },
  };
}
