// Provider token ledger (spec §5.2 limits.tokens_per_day, seed TV-L2-10): tokens used per provider
// per UTC day, persisted through a store port so a restart does not reset the budget.
import type { Clock } from './ports.ts';

/** A day before this was counted by a clock not yet set (src/kernel/wall-age.ts CLOCK_SET_FLOOR_MS). */
const UNSET_CLOCK_DAY = '2025-01-01';

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

  /**
   * The day usage counts toward and what it already holds. A wall-clock step must not hand out a fresh budget
   * (docs/boards.md "Clock"): a stored day later than today (the clock was set back) is still the day being
   * counted, and a stored day from an unset clock (a board that booted at 1970 and spent tokens before NTP set
   * the time) is carried into today. Only a real new day starts from zero.
   */
  private current(e: LedgerEntry | undefined): LedgerEntry {
    const day = this.today();
    if (!e || e.day === day) return { day, tokens: e?.tokens ?? 0 };
    if (e.day > day) return e;
    if (e.day < UNSET_CLOCK_DAY && day >= UNSET_CLOCK_DAY) return { day, tokens: e.tokens };
    return { day, tokens: 0 };
  }

  /** Tokens used today by `provider`. */
  async usedToday(provider: string): Promise<number> {
    const e = await this.store.load(provider);
    const c = this.current(e);
    // Carried once: saved under today (through record's serialization), so tomorrow starts from zero.
    if (e && c.day !== e.day && c.tokens > 0) await this.record(provider, 0);
    return c.tokens;
  }

  /** Record usage reported by a provider response. Serialized per provider: no lost updates. */
  record(provider: string, tokens: number): Promise<void> {
    const prev = this.chain.get(provider) ?? Promise.resolve();
    const next = prev.then(async () => {
      const c = this.current(await this.store.load(provider));
      await this.store.save(provider, { day: c.day, tokens: c.tokens + Math.max(0, Math.floor(tokens)) });
    });
    this.chain.set(provider, next.catch(() => {}));
    return next;
  }
}
