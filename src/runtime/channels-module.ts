// Channels as a kernel module (docs/channels.md): at STARTING a manifest declaring a channel this runtime
// does not serve is refused (never accepted and ignored); each Channel bound in claw.runtime.yaml
// `channels:` opens — a queue's inbox (fs directory or MQTT topic), a Telegram bot, the Home Assistant
// device — and feeds the agent loop through the access gate and the trigger scheduler; at STOPPING it
// stops taking messages, lets running turns finish (stop_grace_ms) and closes. The agent service is
// reached through `getAgent` only.
import { nodeCrypto } from '../node/lazy.ts';
import type { AgentCore, KernelModule, Session } from '../kernel/agent.ts';
import type { Clock, Logger, Transport } from '../kernel/ports.ts';
import type { RuntimeConfig } from '../config/runtime-config.ts';
import type { SecretResolver } from '../kernel/secrets.ts';
import { ClawError, ErrorCode, ProtocolError } from '../protocol/errors.ts';
import { createChannelGate } from '../channels/access.ts';
import { filePairingStorage, pairingDir } from '../channels/pairing-store.ts';
import { TriggerScheduler } from '../channels/trigger.ts';
import { createChannelRunner, type ChannelRunner, type DecideApproval } from '../channels/runner.ts';
import type { ChannelSpec, GetAgent } from '../channels/types.ts';
import { CHANNEL_SCHEMES as CHANNEL_LISTENERS } from './schemes.ts';
import type { ChannelBinding } from '../channels/config.ts';
import { unboundChannelProblems, unservedChannelProblems } from '../manifest/checks/unserved-channels.ts';
import type { JsonRpcMessage } from '../protocol/jsonrpc.ts';

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
  /** Subscribe to the agent's notifications (claw.tool.approval_requested reaches Telegram approvers). */
  notifications?: (listener: (n: JsonRpcMessage) => void) => () => void;
}

/** Which Channel type each kind of binding serves. */
const BINDING_TYPE = { listen: 'queue', telegram: 'telegram', home_assistant: 'custom' } as const;
type BindingKind = keyof typeof BINDING_TYPE;

function bindingKind(name: string, b: ChannelBinding): BindingKind {
  const kinds = (Object.keys(BINDING_TYPE) as BindingKind[]).filter((k) => b[k] !== undefined);
  if (kinds.length !== 1) throw new ClawError('config', `claw.runtime.yaml channels.${name}: needs exactly one of listen: (queue), telegram:, home_assistant: (custom)`);
  return kinds[0];
}

export interface ChannelsModule extends KernelModule {
  /** Open channels by name (tests, status). */
  readonly open: ReadonlyMap<string, { transport: Transport; scheduler: TriggerScheduler }>;
}

const DEFAULT_STOP_GRACE_MS = 30_000;

export function channelsModule(d: ChannelsModuleDeps): ChannelsModule {
  const open = new Map<string, { transport: Transport; runner: ChannelRunner; scheduler: TriggerScheduler; grace: number }>();

  let stopListening: (() => void) | undefined;
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
      // A channel the manifest declares but nobody here serves fails STARTING, naming it (docs/channels.md
      // "What this runtime serves"); `claw validate` reports the same list as warnings.
      const unserved = unservedChannelProblems(m);
      if (unserved.length > 0) {
        throw new ProtocolError(ErrorCode.InvalidParams, `Invalid params: ${unserved.map((p) => p.message).join('; ')} (see docs/channels.md, "What this runtime serves")`, {
          state: 'ERROR',
          unserved: unserved.map((p) => ({ channel: p.channel, path: p.path.join('.') })),
        });
      }
      for (const ch of m.channels) {
        if ((ch.spec as ChannelSpec).type === 'queue' && !bindings[ch.name]) d.log.warn('queue channel not bound in claw.runtime.yaml channels:; it consumes nothing', { channel: ch.name });
      }
      const unbound = unboundChannelProblems(m, bindings, d.config.a2a?.enabled === true);
      if (unbound.length > 0) {
        throw new ProtocolError(ErrorCode.InvalidParams, `Invalid params: ${unbound.map((p) => p.message).join('; ')}; see docs/channels.md`, { state: 'ERROR', channel: unbound[0].channel });
      }
      const agent = d.getAgent();
      if (agent && agent.channelTurns !== true && Object.keys(bindings).length > 0) {
        d.log.warn('the agent service does not separate channel conversations; viewer turns are refused', {});
      }
      let unsubscribe: (() => void) | undefined;
      try {
        for (const [name, b] of Object.entries(bindings)) {
          const ch = m.channels.find((c) => c.name === name);
          if (!ch) throw new ClawError('config', `claw.runtime.yaml channels.${name}: the manifest has no Channel named "${name}"`);
          const spec = ch.spec as ChannelSpec;
          const kind = bindingKind(name, b);
          if (spec.type !== BINDING_TYPE[kind]) {
            throw new ClawError('config', `claw.runtime.yaml channels.${name}: ${kind === 'listen' ? 'listen:' : `${kind}:`} binds a Channel of type ${BINDING_TYPE[kind]} (this one is ${spec.type})`);
          }
          const queueName = spec.trigger?.queue_name;
          if (kind === 'listen' && !queueName) throw new ClawError('config', `channel ${name}: type queue needs trigger.queue_name (spec §5.3)`);
          let gate = createChannelGate(name, spec, {
            now: d.clock.now,
            monotonic: d.clock.monotonic,
            randomInt: (max) => nodeCrypto().randomInt(max),
            pairing: spec.access_control?.mode === 'pairing' ? filePairingStorage(pairingDir(d.dataDir, name)) : undefined,
          });
          let transport: Transport;
          let where: string;
          if (kind === 'telegram') {
            const { openTelegramChannel } = await import('../channels/telegram/channel.ts');
            const tg = await openTelegramChannel({ channel: name, spec, binding: b.telegram!, log: d.log, dataDir: d.dataDir, secrets: d.secrets, decide: d.decide, clock: d.clock });
            // The bot shows "typing…" and asks approvals only for senders the gate let through.
            gate = tg.observe(gate);
            transport = tg;
            where = 'telegram';
          } else if (kind === 'home_assistant') {
            const { openHomeAssistantDevice } = await import('../channels/home-assistant/device.ts');
            transport = await openHomeAssistantDevice({ channel: name, manifest: m, binding: b.home_assistant!, log: d.log, dataDir: d.dataDir, secrets: d.secrets, lifecycle: core.lifecycle, clock: d.clock });
            where = b.home_assistant!.broker;
          } else {
            const scheme = b.listen!.slice(0, b.listen!.indexOf(':'));
            const listen = CHANNEL_LISTENERS[scheme];
            if (!listen) throw new ClawError('config', `channel ${name}: ${scheme}: channels are not in this build (see docs/channels.md, "MQTT topic")`);
            transport = await listen(b, { channel: name, queueName: queueName!, log: d.log, baseDir: d.dataDir, secrets: d.secrets, now: d.clock.now, monotonic: d.clock.monotonic, maxFrameBytes: d.maxFrameBytes });
            where = b.listen!.split('?')[0];
          }
          const scheduler = new TriggerScheduler({ maxParallel: spec.trigger?.max_parallel, overlapPolicy: spec.trigger?.overlap_policy, maxQueue: b.max_queue });
          const runner = createChannelRunner({ channel: name, gate, scheduler, getAgent: d.getAgent, log: d.log,
            decide: d.decide,
            telemetry: core.telemetry,
            // Messages found at STARTING run (the agent module started before this one); from STOPPING on, none.
            accepting: () => !['STOPPING', 'STOPPED', 'ERROR'].includes(core.lifecycle.state),
          });
          open.set(name, { transport, runner, scheduler, grace: b.stop_grace_ms ?? DEFAULT_STOP_GRACE_MS });
          transport.start((frame) => runner.handle(frame));
          d.log.info('channel open', { channel: name, listen: where, max_parallel: scheduler.maxParallel, overlap_policy: scheduler.overlapPolicy });
        }
        // Approval requests and lifecycle changes reach the channels that act on them (Telegram approvers).
        unsubscribe = d.notifications?.((n) => {
          for (const c of open.values()) c.transport.notify(n);
        });
        stopListening = unsubscribe;
      } catch (e) {
        unsubscribe?.();
        await closeAll();
        throw e;
      }
    },
    async stop() {
      stopListening?.();
      stopListening = undefined;
      await closeAll();
    },
  };
}
