// Level 3 swarm methods (spec §9.3.3, §5.10) as a kernel module. STARTING opens the peer bus
// claw.runtime.yaml names (docs/swarm.md), announces presence and starts serving peers;
// STOPPING withdraws presence, finishes what peers gave us, and closes the bus.
import * as v from 'valibot';
import { ErrorCode, ProtocolError } from '../protocol/errors.ts';
import type { KernelModule, Session } from '../kernel/agent.ts';
import { manifestLevel } from '../kernel/conformance.ts';
import type { Clock, Logger } from '../kernel/ports.ts';
import type { JsonRpcNotification } from '../protocol/jsonrpc.ts';
import type { RuntimeConfig } from '../config/runtime-config.ts';
import type { MethodSpec } from '../kernel/methods/index.ts';
import type { SwarmSpec } from '../manifest/schema/index.ts';
import type { PeerBus } from '../swarm/bus.ts';
import type { SecretResolver } from '../kernel/secrets.ts';
import { planOf, roleOf, type SwarmPlan } from '../swarm/plan.ts';
import { SwarmNode, parseParams } from '../swarm/node.ts';
import { toolTaskRunner } from '../swarm/tool-task.ts';
import { view } from '../swarm/tasks.ts';
import { SWARM_DEFAULTS } from '../swarm/config.ts';
import { openBus } from '../swarm/open-bus.ts';
import { BUS_SCHEMES } from './schemes.ts';
import { broadcastParams, delegateParams, discoverParams, reportParams, resultParams } from '../swarm/wire.ts';

export interface SwarmModuleDeps {
  config: RuntimeConfig;
  log: Logger;
  clock: Clock;
  cwd: string;
  /** Agent → Operator notifications (a peer's broadcast is passed on to this agent's operator). */
  notify(n: JsonRpcNotification): void;
  /** The kernel's own dispatch: a peer's task runs as this agent's claw.tool.call, gates included. */
  dispatch(method: string, params: unknown): Promise<unknown>;
  /** Resolves an MQTT bus's password_ref (runtime profile §7). */
  secrets?: SecretResolver;
  /** Tests: the bus to use instead of the configured one. */
  bus?(self: string, plan: SwarmPlan): PeerBus | Promise<PeerBus>;
}

export function swarmModule(d: SwarmModuleDeps): KernelModule {
  let node: SwarmNode | undefined;
  const need = (): SwarmNode => {
    if (!node) throw new ProtocolError(ErrorCode.PeerUnreachable, 'Peer unreachable: this agent has no swarm running');
    return node;
  };
  const method = (states: MethodSpec['states'], handler: MethodSpec['handler']): MethodSpec => ({ level: 3, states, handler });

  const methods: Record<string, MethodSpec> = {
    'claw.swarm.delegate': method(['READY'], (params) => need().coordinator.delegate(parseParams(delegateParams, params, 'claw.swarm.delegate'))),
    // From the operator (trusted): recorded against the task's oldest outstanding delegation (docs/swarm.md).
    'claw.swarm.report': method(['READY', 'STOPPING'], (params) => need().coordinator.report(parseParams(reportParams, params, 'claw.swarm.report'), undefined)),
    // A notification gets no reply (spec §9.3.3); sent as a request, the operator learns who got it.
    'claw.swarm.broadcast': method(['READY'], (params) => {
      const p = parseParams(broadcastParams, params, 'claw.swarm.broadcast');
      return need().broadcast(p.swarm, p.message);
    }),
    'claw.swarm.discover': method(['READY'], (params) => need().discover(parseParams(discoverParams, params ?? {}, 'claw.swarm.discover').swarm)),
    // Extension (docs/swarm.md): the delegating agent's record of a task; no task_id → the dead-letter queue.
    'claw.swarm.result': method(['READY', 'STOPPING'], async (params) => {
      const tasks = need().coordinator.tasks;
      const p = parseParams(v.optional(v.partial(resultParams), {}), params ?? {}, 'claw.swarm.result');
      if (p.task_id === undefined) return { dead_letter: tasks.deadLetters().map(view) };
      if (!tasks.get(p.task_id)) throw new ProtocolError(ErrorCode.InvalidParams, `Invalid params: unknown task_id "${p.task_id}"`, { task_id: p.task_id });
      await tasks.wait(p.task_id, p.wait_ms ?? 0);
      return view(tasks.get(p.task_id)!);
    }),
  };

  return {
    name: 'swarm',
    methods,
    async start(session: Session, agent) {
      const m = session.manifest;
      // Answered per capability group (docs/protocol.md): a level-3 manifest with a Swarm.
      if (!m.swarm || manifestLevel(m) < 3) return;
      const cfg = d.config.swarm;
      const spec = m.swarm.spec as SwarmSpec;
      // Without swarm.bus only `in-process` can be honoured; redis / nats / sqlite-wal are not
      // built in, and quietly meeting nobody would be worse than saying so (docs/swarm.md).
      if (!cfg && spec.coordination.backend !== 'in-process') {
        throw new ProtocolError(ErrorCode.PeerUnreachable, `Peer unreachable: swarm backend "${spec.coordination.backend}" is not built in; bind the swarm in claw.runtime.yaml (swarm.bus: fs:/dir or mqtt://host)`, {
          state: 'ERROR',
          backend: spec.coordination.backend,
        });
      }
      const plan = planOf(m.swarm.name, spec);
      const self = m.identity.name;
      const presenceMs = cfg?.presence_interval_ms ?? SWARM_DEFAULTS.presence_interval_ms;
      let bus: PeerBus;
      try {
        bus = d.bus ? await d.bus(self, plan) : await openBus(cfg, { self, swarm: plan.swarm, log: d.log, clock: d.clock, cwd: d.cwd, presenceMs, secrets: d.secrets }, BUS_SCHEMES);
      } catch (e) {
        throw new ProtocolError(ErrorCode.PeerUnreachable, `Peer unreachable: the swarm bus cannot be opened: ${(e as Error).message}`, { state: 'ERROR' });
      }
      const n = new SwarmNode({
        bus,
        plan,
        log: d.log,
        clock: d.clock,
        presenceMs,
        costAware: spec.aggregation.cost_aware ?? false,
        timing: {
          ackTimeoutMs: cfg?.ack_timeout_ms ?? SWARM_DEFAULTS.ack_timeout_ms,
          retryInitialMs: cfg?.retry_initial_ms ?? SWARM_DEFAULTS.retry_initial_ms,
          retryMaxMs: cfg?.retry_max_ms ?? SWARM_DEFAULTS.retry_max_ms,
          presencePollMs: Math.max(50, Math.min(presenceMs, 500)),
          unavailableGraceMs: cfg?.stale_after_ms ?? 3 * presenceMs,
        },
        runner: toolTaskRunner((method, params) => d.dispatch(method, params), () => self),
        onBroadcast: (params) => d.notify({ jsonrpc: '2.0', method: 'claw.swarm.broadcast', params }),
        onJob: (w) => void agent.inflight.track(w),
      });
      node = n; // before the bus starts: a peer's first message must find it
      try {
        await n.start();
      } catch (e) {
        node = undefined;
        await n.stop().catch(() => {});
        throw new ProtocolError(ErrorCode.PeerUnreachable, `Peer unreachable: the swarm bus did not start: ${(e as Error).message}`, { state: 'ERROR' });
      }
      d.log.info('swarm joined', { swarm: plan.swarm, identity: self, role: roleOf(plan, self), topology: plan.topology, bus: cfg?.bus ?? 'memory' });
    },
    async stop() {
      const n = node;
      node = undefined;
      await n?.stop();
    },
  };
}
