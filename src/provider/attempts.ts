// The attempt loop every request to one provider goes through — chat (client.ts) and embeddings
// (embeddings.ts) alike, so both count against the same limits the same way:
// - requests_per_minute (spec §5.2): one sliding window per provider name, shared by every client
//   built over the same ProviderDeps (a session's chain, its composite tools and memory embeddings);
//   retries count as requests;
// - retries (runtime profile §5): retryable failures only, up to `retry.max_attempts` in total;
//   Retry-After is honoured exactly, and one longer than the backoff ceiling ends this provider's
//   turn so the fallback chain can answer now instead of the agent stalling;
// - usage charged to the token ledger after success (a failed write is logged, never fatal: the
//   answer is already paid for).
import type { ProviderSpec } from '../manifest/schema/index.ts';
import type { ProviderDeps } from './deps.ts';
import { ProviderFailure } from './failure.ts';
import { sleep } from './http.ts';
import { MinuteWindow, acquire } from './limits.ts';
import { MAX_DELAY_MS, RETRY_DEFAULTS, backoffMs } from './retry.ts';

/** The requests_per_minute window of `provider`, one per name for everything built over `deps`. */
export function windowFor(deps: ProviderDeps, provider: string): MinuteWindow {
  const all = (deps.windows ??= new Map());
  let w = all.get(provider);
  if (!w) all.set(provider, (w = new MinuteWindow()));
  return w;
}

/** Abortable wait: the injected sleep (tests) or the clock's. */
export function sleeper(deps: ProviderDeps, signal: AbortSignal): (ms: number) => Promise<void> {
  return (ms) => (deps.sleep ? deps.sleep(ms, signal) : sleep(ms, signal, deps.clock));
}

export interface AttemptPlan {
  name: string;
  spec: ProviderSpec;
  signal: AbortSignal;
  /** Named in the retry log line (e.g. 'embeddings'); chat leaves it out. */
  operation?: string;
}

/** Runs `once(attempt)` (1-based) under the window, retrying as the header says. */
export async function withRetries<T>(deps: ProviderDeps, p: AttemptPlan, once: (attempt: number) => Promise<T>): Promise<T> {
  const wait = sleeper(deps, p.signal);
  const window = windowFor(deps, p.name);
  const maxAttempts = p.spec.retry?.max_attempts ?? RETRY_DEFAULTS.max_attempts;
  for (let attempt = 0; ; attempt++) {
    await acquire(p.name, window, p.spec.limits?.requests_per_minute, () => deps.clock.monotonic(), wait);
    try {
      return await once(attempt + 1);
    } catch (e) {
      if (!(e instanceof ProviderFailure) || !e.retryable || attempt + 1 >= maxAttempts) throw e;
      if (e.retryAfterMs !== undefined && e.retryAfterMs > MAX_DELAY_MS) throw e;
      const delay = e.retryAfterMs ?? backoffMs(p.spec.retry, attempt, deps.random ?? Math.random);
      deps.log?.debug('provider retry', { provider: p.name, ...(p.operation ? { operation: p.operation } : {}), attempt: attempt + 1, reason: e.reason, status: e.status, delay_ms: delay });
      await wait(delay);
    }
  }
}

/** Records `tokens` against today's quota of `provider`. */
export async function charge(deps: ProviderDeps, provider: string, tokens: number): Promise<void> {
  try {
    await deps.ledger.record(provider, tokens);
  } catch (e) {
    deps.log?.warn('provider ledger write failed', { provider, error: (e as Error).message });
  }
}
