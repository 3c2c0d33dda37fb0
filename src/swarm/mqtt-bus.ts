// The swarm over an MQTT broker (docs/swarm.md), on engineer E's MQTT transport: its inbox
// delivers peer messages as frames (./serve.ts answers them, never the router), its link sends
// requests (MQTT 5 response topic + correlation data, or the 3.1.1 envelope) and carries
// presence: a retained status document per agent with a Last Will `offline`, so a SIGKILLed
// peer reads `unavailable` as soon as the broker notices (at once on a closed socket, else
// within 1.5 × keepalive).
// Topics live under their own prefix (default `claw-swarm`, `?prefix=` to change): an agent that
// also serves its operator with `--listen mqtt://…` on `claw/…` never gets a peer's message
// through its router, nor an operator's through the swarm.
import * as v from 'valibot'; // static: a dynamic import() of valibot keeps all of it (+70 KB) in the bundle
import type { MqttOptionsInput } from '../transports/mqtt/options.ts';
import { ClawError } from '../protocol/errors.ts';
import { BusError, type PeerBus, type SeenPeer } from './bus.ts';
import type { SwarmRuntimeConfig } from './config.ts';
import type { OpenBusContext } from './open-bus.ts';
import { peerCalls, serveBus } from './serve.ts';

export const SWARM_TOPIC_PREFIX = 'claw-swarm';

export async function openMqttBus(uri: string, cfg: SwarmRuntimeConfig, c: OpenBusContext): Promise<PeerBus> {
  const { parseMqttUrl } = await import('../transports/mqtt/endpoint.ts');
  const { resolveMqttSettings } = await import('../transports/mqtt/options.ts');
  const { connectionSecrets } = await import('../transports/mqtt/secrets.ts');
  const { createMqttTransport } = await import('../transports/mqtt/transport.ts');
  // swarm.bus names the broker; the swarm and the agent come from the manifest.
  const u = new URL(uri);
  if (u.pathname !== '' && u.pathname !== '/') throw new ClawError('usage', 'swarm.bus: an MQTT bus URL names the broker only (mqtt://host[:port][?options]); swarm and agent come from the manifest');
  if (!u.searchParams.has('prefix')) u.searchParams.set('prefix', SWARM_TOPIC_PREFIX);
  const endpoint = parseMqttUrl(`${u.protocol}//${u.username ? `${u.username}@` : ''}${u.host}/${encodeURIComponent(c.swarm)}/${encodeURIComponent(c.self)}${u.search}`);
  const { mqttOptionsSchema } = await import('../transports/mqtt/options.ts');
  const checked = v.safeParse(mqttOptionsSchema, cfg.mqtt ?? {});
  if (!checked.success) throw new ClawError('usage', `swarm.mqtt.${checked.issues[0].path?.map((p) => p.key).join('.') ?? ''}: ${checked.issues[0].message}`);
  const options: MqttOptionsInput = { client_id: `claw-swarm-${c.swarm}-${c.self}`, ...checked.output };
  const settings = resolveMqttSettings(endpoint, options);
  const { password, ca } = await connectionSecrets(settings, { secrets: c.secrets, baseDir: c.cwd });
  const t = await createMqttTransport({ settings, log: c.log, password, ca, now: () => c.clock.now() });
  const link = t.link;
  let role = 'peer';

  const seen = (swarm: string): SeenPeer[] => {
    if (swarm !== c.swarm) return [];
    const out: SeenPeer[] = [];
    for (const [agent, p] of link.peers()) {
      if (agent === c.self || p.swarm !== swarm) continue;
      const ts = p.ts ? Date.parse(p.ts) : NaN;
      out.push({
        identity: agent,
        swarm,
        role: typeof p.info?.role === 'string' ? p.info.role : 'peer',
        status: p.status === 'offline' ? 'unavailable' : p.status,
        seen_at: Number.isFinite(ts) ? ts : 0,
      });
    }
    return out;
  };

  const reachable = (to: string) => {
    const p = link.peers().get(to);
    if (p?.status === 'offline') throw new BusError('unreachable', `peer ${to} is offline`);
  };

  return {
    self: c.self,
    async start(handler) {
      await link.watchPresence();
      serveBus(t, handler, c.log);
    },
    async announce(p) {
      role = p.role;
      // Retained; the transport re-announces it after every reconnect (a Last Will may have replaced it).
      await t.setPresence(p.status === 'busy' ? 'busy' : 'ready', { role });
    },
    peers: seen,
    ...peerCalls({ request: (to, msg, opts) => link.request(to, msg as never, opts), notify: (to, msg) => link.notify(to, msg as never) }, reachable),
    async close() {
      // A clean close publishes `offline` itself (a clean DISCONNECT suppresses the Last Will).
      await t.close();
    },
  };
}
