// Pending approvals (spec §9.3.2 claw.tool.approve / claw.tool.deny; runtime profile §10 approval
// flow). A call that needs approval waits here, keyed by its request_id, until approve, deny or
// the rule's timeout. Different calls wait independently (concurrently).
import type { Clock } from './ports.ts';
import { timerDelay } from '../protocol/delay.ts';

export type ApprovalOutcome = { kind: 'approved'; reason?: string } | { kind: 'denied'; reason?: string } | { kind: 'timeout' } | { kind: 'cancelled' };

interface Pending {
  resolve(o: ApprovalOutcome): void;
  /** Further waits on the same request_id share the first one's outcome. */
  joined: ((o: ApprovalOutcome) => void)[];
  timer: { cancel(): void };
}

export class ApprovalBroker {
  private readonly pending = new Map<string, Pending>();
  constructor(private readonly clock: Clock) {}

  /** Wait for a decision on `requestId`; a second wait on the same id shares the first one's outcome. */
  wait(requestId: string, timeoutMs: number, signal?: AbortSignal): Promise<ApprovalOutcome> {
    const existing = this.pending.get(requestId);
    if (existing) return new Promise((resolve) => existing.joined.push(resolve));
    return new Promise((resolve) => {
      const finish = (o: ApprovalOutcome) => {
        const p = this.pending.get(requestId);
        if (!p) return;
        p.timer.cancel();
        this.pending.delete(requestId);
        signal?.removeEventListener('abort', onAbort);
        resolve(o);
        for (const j of p.joined) j(o);
      };
      const onAbort = () => finish({ kind: 'cancelled' });
      const timer = this.clock.setTimeout(() => finish({ kind: 'timeout' }), timerDelay(timeoutMs));
      this.pending.set(requestId, { resolve: finish, joined: [], timer });
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Is a call waiting under this request_id? */
  has(requestId: string): boolean {
    return this.pending.has(requestId);
  }

  /** Approve or deny; false when no call is waiting under that id (spec: `{acknowledged: false}`). */
  decide(requestId: string, decision: 'approved' | 'denied', reason?: string): boolean {
    const p = this.pending.get(requestId);
    if (!p) return false;
    p.resolve({ kind: decision, reason });
    return true;
  }

  /** Session end: every waiting call is released as cancelled. */
  cancelAll(): void {
    for (const p of [...this.pending.values()]) p.resolve({ kind: 'cancelled' });
  }

  get size(): number {
    return this.pending.size;
  }
}
