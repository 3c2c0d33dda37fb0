// Lifecycle states and legal transitions (spec §8). STOPPED → STARTING is ours: after a shutdown
// the process keeps serving and a new claw.initialize starts a new session on the same transport.
export const STATES = ['INIT', 'STARTING', 'READY', 'STOPPING', 'STOPPED', 'ERROR'] as const;
export type LifecycleState = (typeof STATES)[number];

const NEXT: Record<LifecycleState, readonly LifecycleState[]> = {
  INIT: ['STARTING'],
  STARTING: ['READY', 'ERROR'],
  READY: ['STOPPING', 'ERROR'],
  STOPPING: ['STOPPED'],
  STOPPED: ['STARTING'],
  // §8 ERROR: "If unrecoverable, transition to STOPPING"; a failed start may also be retried.
  ERROR: ['STOPPING', 'STARTING'],
};

export interface TransitionEvent {
  from: LifecycleState;
  to: LifecycleState;
  duration_ms: number;
}

export class Lifecycle {
  private current: LifecycleState = 'INIT';
  private enteredAt: number;
  private readyAt: number | undefined;
  private stoppedAt: number | undefined;

  constructor(
    private readonly monotonic: () => number,
    private readonly onTransition: (e: TransitionEvent) => void = () => {},
  ) {
    this.enteredAt = monotonic();
  }

  get state(): LifecycleState {
    return this.current;
  }

  to(next: LifecycleState): void {
    if (!NEXT[this.current].includes(next)) {
      throw new Error(`illegal lifecycle transition ${this.current} → ${next}`);
    }
    const now = this.monotonic();
    const e = { from: this.current, to: next, duration_ms: Math.round(now - this.enteredAt) };
    this.current = next;
    this.enteredAt = now;
    if (next === 'READY') {
      this.readyAt = now;
      this.stoppedAt = undefined;
    }
    if (next === 'STOPPED') this.stoppedAt = now;
    this.onTransition(e);
  }

  /**
   * §9.3.1 claw.status: milliseconds since initialization completed (0 before it ever did). Once
   * STOPPED, the session's uptime stays what it was when it stopped.
   */
  uptimeMs(): number {
    if (this.readyAt === undefined) return 0;
    return Math.max(0, Math.floor((this.stoppedAt ?? this.monotonic()) - this.readyAt));
  }
}
