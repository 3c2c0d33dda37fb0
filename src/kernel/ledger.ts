// Provider token ledger (spec §5.2 limits.tokens_per_day, seed TV-L2-10): tokens used per provider
// per UTC day, persisted through a store port so a restart does not reset the budget.
import type { Clock } from './ports.ts';

export interface LedgerEntry {
  /** UTC day, YYYY-MM-DD. A new day starts from zero. */
  day: string;
  tokens: number;
}

export interface LedgerStore {
  load(provider: string): Promise<LedgerEntry | undefined>;
  save(provider: string, entry: LedgerEntry): Promise<void>;
}

export class TokenLedger {
  private readonly chain = new Map<string, Promise<unknown>>();
  constructor(
    private readonly store: LedgerStore,
    private readonly clock: Clock,
  ) {}

  private today(): string {
    return new Date(this.clock.now()).toISOString().slice(0, 10);
  }

  /** Tokens used today by `provider`. */
  async usedToday(provider: string): Promise<number> {
    const e = await this.store.load(provider);
    return e && e.day === this.today() ? e.tokens : 0;
  }

  /** Record usage reported by a provider response. Serialized per provider: no lost updates. */
  record(provider: string, tokens: number): Promise<void> {
    const prev = this.chain.get(provider) ?? Promise.resolve();
    const next = prev.then(async () => {
      const used = await this.usedToday(provider);
      await this.store.save(provider, { day: this.today(), tokens: used + Math.max(0, Math.floor(tokens)) });
    });
    this.chain.set(provider, next.catch(() => {}));
    return next;
  }
}
