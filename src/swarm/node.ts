// One agent's place in a swarm: its bus, presence, the delegating side (Coordinator) and the
// peer side (PeerSide). The kernel module (src/runtime/swarm-module.ts) and the unit tests both
// drive this, so what the tests prove is what runs.
import * as v from 'valibot';
import { ErrorCode, ProtocolError } from '../protocol/errors.ts';
import { issuesData } from '../protocol/wire.ts';
import type { Clock, Logger } from '../kernel/ports.ts';
import { identityUri, type BusMessage, type PeerBus } from './bus.ts';
import { isMember, roleOf, type SwarmPlan } from './plan.ts';
import { Coordinator, type Timing } from './coordinator.ts';
import { route } from './topology.ts';
import { PeerSide, type TaskRunner } from './peer.ts';
import { broadcastParams, delegateParams, reportParams } from './wire.ts';
import { timerDelay } from '../protocol/delay.ts';

/** While presence keeps failing with the same error, at most one warning per this long. */
export const PRESENCE_WARN_EVERY_MS = 10 * 60_000;

export interface SwarmNodeDeps {
  bus: PeerBus;
  plan: SwarmPlan;
  runner: TaskRunner;
  log: Logger;
  clock: Pick<Clock, 'now' | 'monotonic' | 'setInterval'>;
  timing: Timing;
  presenceMs: number;
  costAware: boolean;
  /** A member's broadcast, passed on to this agent's operator. */
  onBroadcast(params: { swarm: string; message: unknown; from: string }): void;
  onJob?(work: Promise<void>): void;
  /** How many times a peer re-sends its report while the delegator is unreachable. */
  reportAttempts?: number;
}

export function parseParams<T extends v.GenericSchema>(schema: T, params: unknown, method: string): v.InferOutput<T> {
  const p = v.safeParse(schema, params);
  if (!p.success) throw new ProtocolError(ErrorCode.InvalidParams, `Invalid params for ${method}`, issuesData(p.issues));
  return p.output;
}

export class SwarmNode {
  readonly coordinator: Coordinator;
  readonly peer: PeerSide;
  private presence: { cancel(): void } | undefined;
  private presenceOutage: { error: string; warnedAt: number; failures: number; since: number } | undefined;

  constructor(private readonly d: SwarmNodeDeps) {
    const now = () => d.clock.now();
    const monotonic = () => d.clock.monotonic();
    this.coordinator = new Coordinator({ bus: d.bus, plan: d.plan, log: d.log, now, monotonic, timing: d.timing, costAware: d.costAware });
    this.peer = new PeerSide({
      bus: d.bus,
      plan: d.plan,
      log: d.log,
      monotonic,
      runner: d.plan.topology === 'hierarchical' ? this.downward(d.runner) : d.runner,
      onStatus: () => void this.announce(),
      onJob: d.onJob,
      report: { ackTimeoutMs: d.timing.ackTimeoutMs, attempts: d.reportAttempts ?? 5, retryInitialMs: d.timing.retryInitialMs, retryMaxMs: d.timing.retryMaxMs },
    });
  }

  get self(): string {
    return this.d.bus.self;
  }

  async start(): Promise<void> {
    await this.d.bus.start((m) => this.fromPeer(m));
    await this.announce();
    this.presence = this.d.clock.setInterval(() => void this.announce(), timerDelay(this.d.presenceMs));
  }

  async stop(): Promise<void> {
    this.presence?.cancel();
    await this.coordinator.stop();
    await this.peer.stop();
    await this.d.bus.close();
  }

  announce(): Promise<void> {
    const { bus, plan } = this.d;
    return bus.announce({ identity: bus.self, swarm: plan.swarm, role: roleOf(plan, bus.self), status: this.peer.status() }).then(
      () => this.announced(),
      (e) => this.notAnnounced(String(e)),
    );
  }

  /**
   * A presence that keeps failing (a full disk under the fs bus, a broker gone) fails at every interval; one
   * warning per new error, then one per PRESENCE_WARN_EVERY_MS with the count, keeps that from filling a
   * board's journal while it lasts.
   */
  private notAnnounced(error: string): void {
    const now = this.d.clock.monotonic();
    const o = this.presenceOutage;
    if (o && o.error === error && now - o.warnedAt < PRESENCE_WARN_EVERY_MS) {
      o.failures++;
      return;
    }
    const failures = (o?.failures ?? 0) + 1;
    this.d.log.warn('swarm presence not announced', { error, failures, next_warning_after_ms: PRESENCE_WARN_EVERY_MS });
    this.presenceOutage = { error, warnedAt: now, failures, since: o?.since ?? now };
  }

  private announced(): void {
    const o = this.presenceOutage;
    if (!o) return;
    this.presenceOutage = undefined;
    this.d.log.info('swarm presence announced again', { failures: o.failures, down_ms: Math.round(this.d.clock.monotonic() - o.since) });
  }

  /** claw.swarm.discover (spec §9.3.3): peers actually seen, with canonical identity URIs. */
  discover(swarm?: string): { peers: { identity: string; uri: string; status: string }[] } {
    if (swarm !== undefined && swarm !== this.d.plan.swarm) return { peers: [] };
    return { peers: this.d.bus.peers(this.d.plan.swarm).map((x) => ({ identity: x.identity, uri: identityUri(x.identity), status: x.status })) };
  }

  /** claw.swarm.broadcast from the operator: to every member seen and not unavailable. */
  async broadcast(swarm: string, message: unknown): Promise<{ delivered: string[]; unreachable: string[] }> {
    const { bus, plan } = this.d;
    if (swarm !== plan.swarm) throw new ProtocolError(ErrorCode.InvalidParams, `Invalid params: swarm "${swarm}" is not this agent's swarm (${plan.swarm})`, { swarm });
    const targets = bus.peers(plan.swarm).filter((x) => x.status !== 'unavailable' && isMember(plan, x.identity)).map((x) => x.identity);
    const sent = await Promise.allSettled(targets.map((to) => bus.notify(to, 'claw.swarm.broadcast', { swarm, message, from: bus.self })));
    const delivered = targets.filter((_, i) => sent[i].status === 'fulfilled');
    return { delivered, unreachable: targets.filter((t) => !delivered.includes(t)) };
  }

  /**
   * Hierarchical (spec §5.10): a member with a live tier below it passes a task down and reports
   * the aggregate up; the lowest tier (or a sub-leader whose tier is down) runs the task itself.
   */
  private downward(own: TaskRunner): TaskRunner {
    return {
      run: async (task, ctx) => {
        const r = route(this.d.plan, this.self);
        if ('refused' in r || this.coordinator.live(r.candidates).length === 0) return own.run(task, ctx);
        const sub = { task_id: `${ctx.task_id}/${this.self}`, task, context: { request_id: `${ctx.request_id}/${this.self}`, swarm: this.d.plan.swarm } };
        this.coordinator.delegate(sub);
        const tasks = this.coordinator.tasks;
        while (tasks.get(sub.task_id)?.state === 'running' && !ctx.signal.aborted) await tasks.wait(sub.task_id, 1000);
        const rec = tasks.get(sub.task_id)!;
        if (rec.state === 'completed' || rec.state === 'partial') return { status: rec.state, result: rec.result };
        return { status: 'failed', result: { error: rec.error ?? { code: ErrorCode.PeerTaskFailed, message: 'Peer task failed' } } };
      },
    };
  }

  /** Messages from peers: untrusted (spec §10). They never reach the operator's method table. */
  async fromPeer(m: BusMessage): Promise<unknown> {
    switch (m.method) {
      case 'claw.swarm.delegate':
        return this.peer.delegate(parseParams(delegateParams, m.params, m.method));
      case 'claw.swarm.report': {
        const p = parseParams(reportParams, m.params, m.method);
        if (!p.from) throw new ProtocolError(ErrorCode.InvalidParams, 'Invalid params: a peer report must name its sender (from)');
        return this.coordinator.report(p, p.from);
      }
      case 'claw.swarm.broadcast': {
        const p = parseParams(broadcastParams, m.params, m.method);
        if (p.swarm !== this.d.plan.swarm || !p.from || !isMember(this.d.plan, p.from)) {
          this.d.log.warn('swarm broadcast dropped: not from a member of this swarm', { from: p.from, swarm: p.swarm });
          return undefined;
        }
        this.d.onBroadcast({ swarm: p.swarm, message: p.message, from: p.from });
        return undefined;
      }
      default:
        throw new ProtocolError(ErrorCode.MethodNotFound, `Method not found: ${m.method} is not a peer method`);
    }
  }
}
