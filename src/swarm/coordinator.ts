// The delegating side of spec §9.3.3: pick peers by topology, send claw.swarm.delegate, wait for
// their claw.swarm.report, aggregate, and keep the record. Failure handling (spec §5.10,
// profile §4/§5, docs/swarm.md):
//   - a peer that does not acknowledge, or goes unavailable before reporting, is unreachable
//     (-32040, retryable): the same peer is retried `retry_per_agent` times with backoff
//     min(initial·2^n, max), then (one-peer topologies) the next candidate is tried;
//   - a peer that refuses the task or reports `failed` (-32041) is not retried (profile §4);
//   - every failure counts toward the peer's circuit breaker; an open breaker skips the peer;
//   - when every try is spent: dead-letter queue if enabled (its max_retries caps the total
//     retries of the task), else failed with -32040;
//   - aggregation.timeout_ms bounds the whole task; what has not reported by then is unreachable.
import { ErrorCode, ProtocolError } from '../protocol/errors.ts';
import type { Logger } from '../kernel/ports.ts';
import { BusError, type PeerBus } from './bus.ts';
import type { SwarmPlan } from './plan.ts';
import { route } from './topology.ts';
import { aggregate, type PeerReport } from './aggregate.ts';
import { CircuitBreakers } from './breaker.ts';
import { Semaphore } from './semaphore.ts';
import { TaskStore, type TaskRecord } from './tasks.ts';
import type { DelegateParams, ReportParams } from './wire.ts';
import { timerDelay } from '../protocol/delay.ts';

export interface Timing {
  /** How long a peer has to acknowledge a delegation. */
  ackTimeoutMs: number;
  retryInitialMs: number;
  retryMaxMs: number;
  /** How often a peer we wait on is checked for presence. */
  presencePollMs: number;
  /**
   * How long a peer we wait on must read unavailable, without a break, before it is given up: a
   * broker restart makes every peer's Last Will fire while the peers themselves work on.
   */
  unavailableGraceMs: number;
}

export interface CoordinatorDeps {
  bus: PeerBus;
  plan: SwarmPlan;
  log: Logger;
  /** Wall clock: the task record's stamps only. */
  now(): number;
  /**
   * Every deadline, backoff, grace and breaker window: on a board without an RTC the wall clock jumps when
   * NTP first sets it (docs/boards.md "Clock"), and a window measured across that jump would close at once or never.
   */
  monotonic(): number;
  timing: Timing;
  costAware: boolean;
}

type Outcome =
  | { kind: 'report'; report: PeerReport }
  | { kind: 'unreachable'; peer: string; why: string }
  | { kind: 'refused'; peer: string; error: { code: number; message: string; data?: unknown } };

interface Pending {
  peer: string;
  resolve(r: PeerReport): void;
}

export class Coordinator {
  readonly tasks = new TaskStore();
  readonly breakers: CircuitBreakers;
  private readonly sem: Semaphore;
  private readonly perPeer = new Map<string, Semaphore>();
  private readonly outstanding = new Map<string, number>();
  private readonly pending = new Map<string, Pending[]>();
  private readonly running = new Set<Promise<void>>();
  private readonly stopped = new AbortController();
  private rr = 0;
  /** token_usage summed over every report received (resource_limits.max_total_tokens). */
  tokensUsed = 0;

  constructor(private readonly d: CoordinatorDeps) {
    this.breakers = new CircuitBreakers(d.plan.breaker, d.monotonic);
    this.sem = new Semaphore(d.plan.maxParallel);
  }

  /** claw.swarm.delegate from this agent's operator: accept (acknowledge) and run in the background. */
  delegate(p: DelegateParams): { acknowledged: true; task_id: string; peers: string[] } {
    const { plan, bus } = this.d;
    if (p.context.swarm !== plan.swarm) {
      throw new ProtocolError(ErrorCode.InvalidParams, `Invalid params: context.swarm "${p.context.swarm}" is not this agent's swarm (${plan.swarm})`, { swarm: p.context.swarm });
    }
    const known = this.tasks.get(p.task_id);
    if (known) {
      // Profile §5 idempotency: the same delegation again is acknowledged without a second run.
      if (known.delegate.context.request_id === p.context.request_id) return { acknowledged: true, task_id: p.task_id, peers: [...new Set(known.asked)] };
      throw new ProtocolError(ErrorCode.InvalidParams, `Invalid params: task_id "${p.task_id}" was already delegated`, { task_id: p.task_id });
    }
    if (plan.maxTotalTokens !== undefined && this.tokensUsed >= plan.maxTotalTokens) {
      // resource_limits.max_total_tokens spent: the spec's "token or cost limit reached" code (§9.4).
      throw new ProtocolError(ErrorCode.ProviderQuotaExceeded, `Provider quota exceeded: swarm ${plan.swarm} used ${this.tokensUsed} of max_total_tokens ${plan.maxTotalTokens}`, {
        swarm: plan.swarm,
        used: this.tokensUsed,
        limit: plan.maxTotalTokens,
      });
    }
    const r = route(plan, bus.self);
    if ('refused' in r) throw new ProtocolError(ErrorCode.InvalidParams, `Invalid params: ${r.refused}`, { topology: plan.topology });
    const live = this.live(r.candidates);
    if (live.length === 0 || (r.fanout === 'chain' && live.length < r.candidates.length)) {
      const missing = r.candidates.filter((c) => !live.includes(c));
      throw new ProtocolError(ErrorCode.PeerUnreachable, `Peer unreachable: no ${r.fanout === 'chain' ? 'complete pipeline' : 'peer'} of swarm ${plan.swarm} is available for this task`, {
        swarm: plan.swarm,
        topology: plan.topology,
        candidates: r.candidates,
        unavailable: missing,
      });
    }
    const rec: TaskRecord = {
      task_id: p.task_id,
      swarm: plan.swarm,
      state: 'running',
      topology: plan.topology,
      strategy: plan.strategy,
      asked: [],
      attempts: 0,
      reports: [],
      created_at: new Date(this.d.now()).toISOString(),
      delegate: p,
    };
    this.tasks.add(rec);
    const job = this.run(rec, r.fanout, r.fanout === 'one' ? live : r.fanout === 'chain' ? r.candidates : live)
      .catch((e) => this.fail(rec, ErrorCode.InternalError, 'Internal error', undefined, e))
      .finally(() => this.running.delete(job));
    this.running.add(job);
    return { acknowledged: true, task_id: p.task_id, peers: r.fanout === 'one' ? [live[0]] : live };
  }

  /** claw.swarm.report: from a peer over the bus (must answer a delegation we sent it) or from the operator. */
  report(p: ReportParams, from: string | undefined): { acknowledged: boolean } {
    const list = this.pending.get(p.task_id);
    const i = list?.findIndex((w) => from === undefined || w.peer === from) ?? -1;
    if (!list || i < 0) {
      this.d.log.info('swarm report not expected: not recorded', { task_id: p.task_id, from });
      return { acknowledged: false };
    }
    if (typeof p.token_usage === 'number') this.tokensUsed += p.token_usage;
    const [w] = list.splice(i, 1);
    if (list.length === 0) this.pending.delete(p.task_id);
    w.resolve({ peer: w.peer, status: p.status, result: p.result, token_usage: p.token_usage, duration_ms: p.duration_ms });
    return { acknowledged: true };
  }

  /** Peers that can take a task now, best first: ready before busy, least loaded, then round-robin. */
  live(candidates: string[]): string[] {
    const seen = new Map(this.d.bus.peers(this.d.plan.swarm).map((p) => [p.identity, p]));
    const ok = candidates.filter((c) => {
      const p = seen.get(c);
      return p !== undefined && p.status !== 'unavailable' && this.breakers.state(c) !== 'open';
    });
    const rot = this.rr++ % Math.max(ok.length, 1);
    const rotated = [...ok.slice(rot), ...ok.slice(0, rot)];
    const score = (c: string) => (seen.get(c)!.status === 'busy' ? 1000 : 0) + (this.outstanding.get(c) ?? 0);
    return rotated.map((c, i) => ({ c, i })).sort((a, b) => score(a.c) - score(b.c) || a.i - b.i).map((x) => x.c);
  }

  async stop(): Promise<void> {
    this.stopped.abort();
    for (const [, list] of this.pending) for (const w of list) w.resolve({ peer: w.peer, status: 'failed', result: { error: 'delegating agent stopped' } });
    this.pending.clear();
    await Promise.allSettled([...this.running]);
  }

  private async run(rec: TaskRecord, fanout: 'one' | 'all' | 'chain', peers: string[]): Promise<void> {
    const deadline = this.d.monotonic() + this.d.plan.timeoutMs;
    const budget = { retries: this.d.plan.deadLetter.enabled ? this.d.plan.deadLetter.maxRetries : Infinity };
    const params = rec.delegate;
    if (fanout === 'one') {
      let last: Outcome | undefined;
      for (const peer of peers) {
        last = await this.tryPeer(rec, peer, params, deadline, budget);
        if (last.kind !== 'unreachable') break;
        if (budget.retries <= 0 || this.d.monotonic() >= deadline) break;
        budget.retries--; // moving on to the next candidate is a retry of the task too
      }
      return this.settle(rec, last ? [last] : []);
    }
    if (fanout === 'all') {
      const outcomes = await Promise.all(peers.map((peer) => this.tryPeer(rec, peer, params, deadline, budget)));
      return this.settle(rec, outcomes);
    }
    // chain: each stage gets the previous stage's result as task.input.previous.
    const outcomes: Outcome[] = [];
    let input = params.task.input;
    for (const peer of peers) {
      const stage: DelegateParams = { ...params, task: { ...params.task, input: outcomes.length ? { ...input, previous: (outcomes.at(-1) as any).report.result } : input } };
      const o = await this.tryPeer(rec, peer, stage, deadline, budget);
      outcomes.push(o);
      if (o.kind !== 'report' || o.report.status === 'failed') break;
      input = stage.task.input;
    }
    return this.settle(rec, outcomes, peers.length);
  }

  /** One peer, with retry_per_agent retries while it is unreachable. */
  private async tryPeer(rec: TaskRecord, peer: string, params: DelegateParams, deadline: number, budget: { retries: number }): Promise<Outcome> {
    const { timing, plan } = this.d;
    let o: Outcome = { kind: 'unreachable', peer, why: 'not tried' };
    for (let n = 0; ; n++) {
      if (this.stopped.signal.aborted) return { kind: 'unreachable', peer, why: 'the delegating agent stopped' };
      if (!this.breakers.admit(peer)) return { kind: 'unreachable', peer, why: 'circuit breaker open' };
      o = await this.attempt(rec, peer, params, deadline);
      if (o.kind === 'report' && o.report.status !== 'failed') this.breakers.success(peer);
      else this.breakers.failure(peer);
      if (o.kind !== 'unreachable' || n >= plan.retryPerAgent || budget.retries <= 0) return o;
      const delay = Math.min(timing.retryInitialMs * 2 ** n, timing.retryMaxMs);
      if (this.d.monotonic() + delay >= deadline) return o;
      budget.retries--;
      this.d.log.info('swarm retry', { task_id: rec.task_id, peer, attempt: n + 2, delay_ms: delay, why: o.why });
      await sleep(delay, this.stopped.signal);
    }
  }

  private attempt(rec: TaskRecord, peer: string, params: DelegateParams, deadline: number): Promise<Outcome> {
    const gate = this.d.plan.sequentialWithinAgent ? this.lane(peer) : undefined;
    const go = () => this.sem.run(() => this.send(rec, peer, params, deadline));
    return gate ? gate.run(go) : go();
  }

  private async send(rec: TaskRecord, peer: string, params: DelegateParams, deadline: number): Promise<Outcome> {
    const { bus, timing } = this.d;
    rec.attempts++;
    rec.asked.push(peer);
    this.outstanding.set(peer, (this.outstanding.get(peer) ?? 0) + 1);
    // Registered before sending: a fast peer's report can arrive before its acknowledgement.
    let resolveReport!: (r: PeerReport) => void;
    const reported = new Promise<PeerReport>((r) => (resolveReport = r));
    const waiter: Pending = { peer, resolve: resolveReport };
    const list = this.pending.get(rec.task_id) ?? [];
    list.push(waiter);
    this.pending.set(rec.task_id, list);
    const drop = () => {
      const l = this.pending.get(rec.task_id);
      const i = l?.indexOf(waiter) ?? -1;
      if (l && i >= 0) l.splice(i, 1);
      if (l && l.length === 0) this.pending.delete(rec.task_id);
    };
    try {
      const left = deadline - this.d.monotonic();
      if (left <= 0) return { kind: 'unreachable', peer, why: 'aggregation timeout' };
      let ack: any;
      try {
        ack = await bus.request(peer, 'claw.swarm.delegate', { ...params, from: bus.self }, Math.min(timing.ackTimeoutMs, left));
      } catch (e) {
        if (e instanceof ProtocolError) return { kind: 'refused', peer, error: e.toJSON() };
        return { kind: 'unreachable', peer, why: e instanceof BusError ? e.message : String(e) };
      }
      if (ack?.acknowledged !== true) return { kind: 'refused', peer, error: { code: ErrorCode.PeerTaskFailed, message: `peer ${peer} did not accept the task` } };
      const r = await this.watch(reported, peer, deadline);
      return 'why' in r ? { kind: 'unreachable', peer, why: r.why === 'deadline' ? 'aggregation timeout' : `peer ${peer} became unavailable before reporting` } : { kind: 'report', report: r.report };
    } finally {
      drop();
      this.outstanding.set(peer, (this.outstanding.get(peer) ?? 1) - 1);
    }
  }

  /**
   * The report, or why there is none: the deadline passed, or the peer went unavailable first. Which one is said
   * by the path that ended the wait, not by reading the clock afterwards: a timer can fire up to a loop
   * iteration before the monotonic clock reaches its deadline (libuv measures timers from the time cached at
   * the start of the iteration), and a late loop under load is when that happens.
   */
  private watch(reported: Promise<PeerReport>, peer: string, deadline: number): Promise<{ report: PeerReport } | { why: 'deadline' | 'unavailable' }> {
    return new Promise((resolve) => {
      let done = false;
      const finish = (r: { report: PeerReport } | { why: 'deadline' | 'unavailable' }) => {
        if (done) return;
        done = true;
        clearInterval(poll);
        clearTimeout(timer);
        resolve(r);
      };
      const timer = setTimeout(() => finish({ why: 'deadline' }), timerDelay(deadline - this.d.monotonic()));
      let downSince: number | undefined;
      const poll = setInterval(() => {
        const p = this.d.bus.peers(this.d.plan.swarm).find((x) => x.identity === peer);
        if (p && p.status !== 'unavailable') return void (downSince = undefined);
        downSince ??= this.d.monotonic();
        if (this.d.monotonic() - downSince >= this.d.timing.unavailableGraceMs) finish({ why: 'unavailable' });
      }, timerDelay(this.d.timing.presencePollMs));
      reported.then((report) => finish({ report }));
    });
  }

  private lane(peer: string): Semaphore {
    let s = this.perPeer.get(peer);
    if (!s) this.perPeer.set(peer, (s = new Semaphore(1)));
    return s;
  }

  private settle(rec: TaskRecord, outcomes: Outcome[], stages?: number): void {
    const reports = outcomes.flatMap((o) => (o.kind === 'report' ? [o.report] : []));
    rec.reports = reports;
    const usable = reports.filter((r) => r.status !== 'failed');
    const failed = reports.filter((r) => r.status === 'failed');
    const refused = outcomes.filter((o): o is Extract<Outcome, { kind: 'refused' }> => o.kind === 'refused');
    const unreachable = outcomes.filter((o): o is Extract<Outcome, { kind: 'unreachable' }> => o.kind === 'unreachable');
    const complete = stages === undefined ? usable.length === outcomes.length && outcomes.length > 0 : usable.length === stages;
    if (usable.length > 0 && (stages === undefined || complete)) {
      const agg = aggregate(this.d.plan.strategy, usable, this.d.costAware);
      if (!agg.ok) return this.fail(rec, ErrorCode.PeerTaskFailed, `Peer task failed: ${agg.why}`, agg.data);
      rec.result = agg.result;
      rec.state = complete && usable.every((r) => r.status === 'completed') ? 'completed' : 'partial';
      return this.tasks.finish(rec, new Date(this.d.now()).toISOString());
    }
    if (failed.length > 0 || refused.length > 0) {
      return this.fail(rec, ErrorCode.PeerTaskFailed, 'Peer task failed', {
        failed: failed.map((r) => ({ peer: r.peer, result: r.result })),
        refused: refused.map((o) => ({ peer: o.peer, error: o.error })),
      });
    }
    const data = { unreachable: unreachable.map((o) => ({ peer: o.peer, why: o.why })), attempts: rec.attempts };
    if (this.d.plan.deadLetter.enabled) {
      rec.state = 'dead-letter';
      rec.error = { code: ErrorCode.PeerUnreachable, message: 'Peer unreachable: task moved to the dead-letter queue', data };
      this.d.log.warn('swarm task dead-lettered', { task_id: rec.task_id, attempts: rec.attempts });
      return this.tasks.finish(rec, new Date(this.d.now()).toISOString());
    }
    return this.fail(rec, ErrorCode.PeerUnreachable, 'Peer unreachable', data);
  }

  private fail(rec: TaskRecord, code: number, message: string, data?: unknown, cause?: unknown): void {
    if (cause) this.d.log.error('swarm task crashed', { task_id: rec.task_id, error: String(cause) });
    rec.state = 'failed';
    rec.error = data === undefined ? { code, message } : { code, message, data };
    this.tasks.finish(rec, new Date(this.d.now()).toISOString());
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, timerDelay(ms));
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });
}
