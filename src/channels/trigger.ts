// The `trigger` block's concurrency rules (spec §5.3 "Event-Driven Trigger Semantics"):
//   max_parallel defaults to 1, overlap_policy to skip, and a channel MUST NOT exceed max_parallel
//   concurrent trigger executions. overlap_policy says what happens to an event that arrives while
//   max_parallel executions run:
//     skip  → the event is not run (its sender is told: -32051, reason "busy");
//     queue → it waits, first in first out, and starts when an execution ends;
//     allow → overlapping executions are allowed, but the MUST above leaves no room to start one beyond
//             max_parallel: the event waits for a free slot exactly like `queue` (docs/channels.md).
//   Waiting events are bounded (`maxQueue`); one arriving at a full queue is skipped (reason "queue_full").
import { AsyncResource } from 'node:async_hooks';
import type { OverlapPolicy } from './types.ts';

export type SubmitResult = 'started' | 'queued' | 'skipped_busy' | 'skipped_queue_full';

export interface TriggerOptions {
  maxParallel?: number;
  overlapPolicy?: OverlapPolicy;
  /** Events allowed to wait under queue/allow (default 100). */
  maxQueue?: number;
}

export class TriggerScheduler {
  readonly maxParallel: number;
  readonly overlapPolicy: OverlapPolicy;
  readonly maxQueue: number;
  private active = 0;
  private peak = 0;
  private readonly waiting: { run: () => Promise<unknown>; cancel: () => void }[] = [];
  private idleWaiters: (() => void)[] = [];

  constructor(o: TriggerOptions = {}) {
    this.maxParallel = o.maxParallel ?? 1;
    this.overlapPolicy = o.overlapPolicy ?? 'skip';
    this.maxQueue = o.maxQueue ?? 100;
  }

  /** Executions running now. */
  get running(): number {
    return this.active;
  }
  get queued(): number {
    return this.waiting.length;
  }
  /** The most executions ever running at once (tests assert it never passes max_parallel). */
  get peakRunning(): number {
    return this.peak;
  }

  /**
   * Start `run` now, queue it, or refuse it. `cancel` is called instead of `run` for a queued event that
   * never starts (cancelQueued at shutdown).
   */
  submit(run: () => Promise<unknown>, cancel: () => void = () => {}): SubmitResult {
    if (this.active < this.maxParallel) {
      this.start(run);
      return 'started';
    }
    if (this.overlapPolicy === 'skip') return 'skipped_busy';
    if (this.waiting.length >= this.maxQueue) return 'skipped_queue_full';
    // A queued event runs in its own submitter's async context, not that of the execution whose end starts it:
    // whatever it announces (a Telegram approval, channel.ts) is then told apart by whose message it is.
    this.waiting.push({ run: AsyncResource.bind(run), cancel });
    return 'queued';
  }

  /** Drop every waiting event (each gets its cancel); running ones go on. */
  cancelQueued(): number {
    const list = this.waiting.splice(0);
    for (const w of list) w.cancel();
    return list.length;
  }

  /** Resolves when nothing runs and nothing waits. */
  idle(): Promise<void> {
    if (this.active === 0 && this.waiting.length === 0) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  private start(run: () => Promise<unknown>): void {
    this.active++;
    if (this.active > this.peak) this.peak = this.active;
    let p: Promise<unknown>;
    try {
      p = run();
    } catch (e) {
      p = Promise.reject(e);
    }
    void p.then(
      () => this.done(),
      () => this.done(),
    );
  }

  private done(): void {
    this.active--;
    const next = this.waiting.shift();
    if (next) this.start(next.run);
    else if (this.active === 0) for (const w of this.idleWaiters.splice(0)) w();
  }
}
