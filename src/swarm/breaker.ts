// Per-peer circuit breaker (spec §5.10 failure.circuit_breaker): `threshold` consecutive failures
// open it; while open the peer gets nothing; after `resetMs` one trial goes through (half-open):
// success closes it, failure opens it again for another `resetMs`.
export type BreakerState = 'closed' | 'open' | 'half-open';

interface Entry {
  failures: number;
  openedAt?: number;
  trial: boolean;
}

export class CircuitBreakers {
  private readonly peers = new Map<string, Entry>();
  constructor(
    private readonly cfg: { threshold: number; resetMs: number } | undefined,
    private readonly now: () => number,
  ) {}

  state(peer: string): BreakerState {
    const e = this.peers.get(peer);
    if (!this.cfg || !e || e.openedAt === undefined) return 'closed';
    return this.now() - e.openedAt >= this.cfg.resetMs ? 'half-open' : 'open';
  }

  /** May a task go to this peer now? A half-open peer admits one trial at a time. */
  admit(peer: string): boolean {
    const s = this.state(peer);
    if (s === 'closed') return true;
    if (s === 'open') return false;
    const e = this.peers.get(peer)!;
    if (e.trial) return false;
    e.trial = true;
    return true;
  }

  success(peer: string): void {
    this.peers.delete(peer);
  }

  failure(peer: string): void {
    if (!this.cfg) return;
    const e = this.peers.get(peer) ?? { failures: 0, trial: false };
    e.failures++;
    if (e.trial || e.failures >= this.cfg.threshold) e.openedAt = this.now();
    e.trial = false;
    this.peers.set(peer, e);
  }
}
