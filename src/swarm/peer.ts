// The peer side of spec §9.3.3: a claw.swarm.delegate from another agent is acknowledged, run
// (through this agent's own gates: see ./tool-task.ts), and answered with claw.swarm.report.
// Everything in a peer's message is untrusted input (spec §10 Layer 6): the sender must be a
// member of this agent's swarm, the task runs as this agent's identity under this agent's
// policy and sandbox, and a task_id seen before is acknowledged without a second run (profile §5).
import { ErrorCode, ProtocolError } from '../protocol/errors.ts';
import type { Logger } from '../kernel/ports.ts';
import { BusError, type PeerBus, type PeerStatus } from './bus.ts';
import { isMember, type SwarmPlan } from './plan.ts';
import { Semaphore } from './semaphore.ts';
import type { DelegateParams, ReportParams } from './wire.ts';
import { timerDelay } from '../protocol/delay.ts';

export interface TaskOutcome {
  status: ReportParams['status'];
  result: unknown;
  token_usage?: number;
}

/** What "working on a task" means for this agent (docs/swarm.md). */
export interface TaskRunner {
  run(task: DelegateParams['task'], ctx: { task_id: string; request_id: string; from: string; signal: AbortSignal }): Promise<TaskOutcome>;
}

export interface PeerDeps {
  bus: PeerBus;
  plan: SwarmPlan;
  runner: TaskRunner;
  log: Logger;
  /** Monotonic ms: a report's duration_ms must not take in a wall-clock jump. */
  monotonic(): number;
  /** Called when busy/ready changes, so presence can be re-announced. */
  onStatus(s: PeerStatus): void;
  /** Each task's work, so a graceful shutdown can drain it (spec §8 STOPPING). */
  onJob?(work: Promise<void>): void;
  report: { ackTimeoutMs: number; attempts: number; retryInitialMs: number; retryMaxMs: number };
}

interface Job {
  from: string;
  request_id: string;
  report?: ReportParams;
}

const MAX_REMEMBERED = 1000;
const STOP_GRACE_MS = 1000;

export class PeerSide {
  private readonly jobs = new Map<string, Job>();
  private readonly sem: Semaphore;
  private readonly running = new Set<Promise<void>>();
  private readonly abort = new AbortController();
  private active = 0;

  constructor(private readonly d: PeerDeps) {
    this.sem = new Semaphore(d.plan.maxParallel);
  }

  status(): PeerStatus {
    return this.active >= this.d.plan.maxParallel ? 'busy' : 'ready';
  }

  /** A delegation from a peer. Returns the acknowledgement; the work goes on in the background. */
  delegate(p: DelegateParams): { acknowledged: boolean } {
    const { plan, log } = this.d;
    const from = p.from;
    if (!from || !isMember(plan, from) || p.context.swarm !== plan.swarm) {
      log.warn('swarm delegation refused: sender is not a member of this swarm', { from, swarm: p.context.swarm });
      throw new ProtocolError(ErrorCode.PolicyDenied, `Policy denied: ${from ?? 'an unnamed sender'} is not a member of swarm ${plan.swarm}`, { swarm: p.context.swarm });
    }
    const seen = this.jobs.get(p.task_id);
    if (seen) {
      if (seen.from !== from || seen.request_id !== p.context.request_id) {
        throw new ProtocolError(ErrorCode.InvalidParams, `Invalid params: task_id "${p.task_id}" was already delegated`, { task_id: p.task_id });
      }
      // Redelivery (the sender retried): acknowledge again; a finished task's report is re-sent.
      if (seen.report) this.track(this.sendReport(from, seen.report));
      return { acknowledged: true };
    }
    if (this.jobs.size >= MAX_REMEMBERED) this.jobs.delete(this.jobs.keys().next().value!);
    const job: Job = { from, request_id: p.context.request_id };
    this.jobs.set(p.task_id, job);
    this.track(this.sem.run(() => this.work(p, job)));
    return { acknowledged: true };
  }

  /**
   * The runtime drained in-flight work before this (spec §8); what is still running is told to
   * stop and given STOP_GRACE_MS, never waited on forever (a task that ignores its signal).
   */
  async stop(): Promise<void> {
    this.abort.abort();
    let t: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([Promise.allSettled([...this.running]), new Promise((r) => (t = setTimeout(r, STOP_GRACE_MS)))]);
    clearTimeout(t);
  }

  private track(p: Promise<void>): void {
    const q = p.catch((e) => this.d.log.error('swarm peer task crashed', { error: String(e) })).finally(() => this.running.delete(q));
    this.running.add(q);
    this.d.onJob?.(q);
  }

  private async work(p: DelegateParams, job: Job): Promise<void> {
    this.active++;
    if (this.active === this.d.plan.maxParallel) this.d.onStatus('busy');
    const started = this.d.monotonic();
    let out: TaskOutcome;
    try {
      out = await this.d.runner.run(p.task, { task_id: p.task_id, request_id: p.context.request_id, from: job.from, signal: this.abort.signal });
    } catch (e) {
      out = { status: 'failed', result: { error: e instanceof ProtocolError ? e.toJSON() : { code: ErrorCode.InternalError, message: 'Internal error' } } };
    } finally {
      this.active--;
      if (this.active === this.d.plan.maxParallel - 1) this.d.onStatus('ready');
    }
    job.report = { task_id: p.task_id, status: out.status, result: out.result, duration_ms: this.d.monotonic() - started, ...(out.token_usage !== undefined ? { token_usage: out.token_usage } : {}) };
    await this.sendReport(job.from, job.report);
  }

  /** claw.swarm.report to the delegating agent; retried with backoff while it is unreachable. */
  private async sendReport(to: string, report: ReportParams): Promise<void> {
    const { bus, report: r, log } = this.d;
    for (let n = 0; n < r.attempts && !this.abort.signal.aborted; n++) {
      try {
        const ack: any = await bus.request(to, 'claw.swarm.report', { ...report, from: bus.self }, r.ackTimeoutMs);
        if (ack?.acknowledged !== true) log.info('swarm report not recorded by the delegating agent', { task_id: report.task_id, to });
        return;
      } catch (e) {
        if (!(e instanceof BusError)) {
          log.warn('swarm report refused', { task_id: report.task_id, to, error: (e as Error).message });
          return;
        }
        await new Promise((res) => setTimeout(res, timerDelay(Math.min(r.retryInitialMs * 2 ** n, r.retryMaxMs))));
      }
    }
    log.warn('swarm report undelivered', { task_id: report.task_id, to });
  }
}
