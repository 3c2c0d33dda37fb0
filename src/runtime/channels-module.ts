// Queue channels as a kernel module (docs/channels.md): at STARTING each Channel of `type: queue` bound in
// claw.runtime.yaml `channels:` opens its inbox (fs directory or MQTT topic) and feeds the agent loop
// through the access gate and the trigger scheduler; at STOPPING it stops taking messages, lets running
// turns finish (stop_grace_ms) and closes. The agent service is reached through `getAgent` only.
import { nodeCrypto } from '../node/lazy.ts';
import type { AgentCore, KernelModule, Session } from '../kernel/agent.ts';
import type { Clock, Logger, Transport } from '../kernel/ports.ts';
import type { RuntimeConfig } from '../config/runtime-config.ts';
import type { SecretResolver } from '../kernel/secrets.ts';
import { ClawError } from '../protocol/errors.ts';
import { createChannelGate } from '../channels/access.ts';
import { filePairingStorage, pairingDir } from '../channels/pairing-store.ts';
import { TriggerScheduler } from '../channels/trigger.ts';
import { createChannelRunner, type ChannelRunner, type DecideApproval } from '../channels/runner.ts';
import type { ChannelSpec, GetAgent } from '../channels/types.ts';
import { CHANNEL_SCHEMES as CHANNEL_LISTENERS } from './schemes.ts';

export interface ChannelsModuleDeps {
  config: RuntimeConfig;
  log: Logger;
  clock: Clock;
  /** data_dir: pairings live here, and relative `fs:` inboxes resolve against it. */
  dataDir: string;
  getAgent: GetAgent;
  secrets?: SecretResolver;
  maxFrameBytes?: number;
  /** claw.tool.approve / claw.tool.deny for channel admins (channel.approve / channel.deny). */
  decide?: DecideApproval;
}

export interface ChannelsModule extends KernelModule {
  /** Open channels by name (tests, status). */
  readonly open: ReadonlyMap<string, { transport: Transport; scheduler: TriggerScheduler }>;
}

const DEFAULT_STOP_GRACE_MS = 30_000;

export function channelsModule(d: ChannelsModuleDeps): ChannelsModule {
  const open = new Map<string, { transport: Transport; runner: ChannelRunner; scheduler: TriggerScheduler; grace: number }>();

  const closeAll = async () => {
    const list = [...open.values()];
    open.clear();
    await Promise.all(
      list.map(async (c) => {
        await c.runner.stop(c.grace);
        await c.transport.close().catch((e) => d.log.warn('channel close failed', { channel: c.transport.name, error: String(e) }));
      }),
    );
  };

  return {
    name: 'channels',
    open,
    async start(session: Session, core: AgentCore) {
      const bindings = d.config.channels ?? {};
      const m = session.manifest;
      for (const ch of m.channels) {
        const spec = ch.spec as ChannelSpec;
        if (spec.type === 'queue' && !bindings[ch.name]) d.log.warn('queue channel not bound in claw.runtime.yaml channels:; it consumes nothing', { channel: ch.name });
      }
      const agent = d.getAgent();
      if (agent && agent.channelTurns !== true && Object.keys(bindings).length > 0) {
        d.log.warn('the agent service does not separate channel conversations; viewer turns are refused', {});
      }
      try {
        for (const [name, b] of Object.entries(bindings)) {
          const ch = m.channels.find((c) => c.name === name);
          if (!ch) throw new ClawError('config', `claw.runtime.yaml channels.${name}: the manifest has no Channel named "${name}"`);
          const spec = ch.spec as ChannelSpec;
          if (spec.type !== 'queue') throw new ClawError('config', `claw.runtime.yaml channels.${name}: only type: queue channels are bound here (this one is ${spec.type})`);
          const queueName = spec.trigger?.queue_name;
          if (!queueName) throw new ClawError('config', `channel ${name}: type queue needs trigger.queue_name (spec §5.3)`);
          const gate = createChannelGate(name, spec, {
            now: d.clock.now,
            monotonic: d.clock.monotonic,
            randomInt: (max) => nodeCrypto().randomInt(max),
            pairing: spec.access_control?.mode === 'pairing' ? filePairingStorage(pairingDir(d.dataDir, name)) : undefined,
          });
          const scheduler = new TriggerScheduler({ maxParallel: spec.trigger?.max_parallel, overlapPolicy: spec.trigger?.overlap_policy, maxQueue: b.max_queue });
          const runner = createChannelRunner({ channel: name, gate, scheduler, getAgent: d.getAgent, log: d.log,
            decide: d.decide,
            telemetry: core.telemetry,
            // Messages found at STARTING run (the agent module started before this one); from STOPPING on, none.
            accepting: () => !['STOPPING', 'STOPPED', 'ERROR'].includes(core.lifecycle.state),
          });
          const scheme = b.listen.slice(0, b.listen.indexOf(':'));
          const listen = CHANNEL_LISTENERS[scheme];
          if (!listen) throw new ClawError('config', `channel ${name}: ${scheme}: channels are not in this build (see docs/channels.md, "MQTT topic")`);
          const transport = await listen(b, { channel: name, queueName, log: d.log, baseDir: d.dataDir, secrets: d.secrets, now: d.clock.now, maxFrameBytes: d.maxFrameBytes });
          open.set(name, { transport, runner, scheduler, grace: b.stop_grace_ms ?? DEFAULT_STOP_GRACE_MS });
          transport.start((frame) => runner.handle(frame));
          d.log.info('channel open', { channel: name, listen: b.listen.split('?')[0], max_parallel: scheduler.maxParallel, overlap_policy: scheduler.overlapPolicy });
        }
      } catch (e) {
        await closeAll();
        throw e;
      }
    },
    async stop() {
      await closeAll();
    },
  };
}
