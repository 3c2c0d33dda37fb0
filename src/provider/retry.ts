// Retry timing, runtime profile §5: delay = min(initial_delay_ms * 2^attempt, max_delay_ms), with
// the recommended initial_delay_ms 1000, max_delay_ms 30000, max_attempts 3 (attempts in total,
// the first included). The Provider's `retry` block overrides them (spec §5.2); `linear` and
// `constant` backoffs are initial * (attempt + 1) and initial.
export const RETRY_DEFAULTS = { max_attempts: 3, backoff: 'exponential', initial_delay_ms: 1000 } as const;
export const MAX_DELAY_MS = 30_000;

export interface RetrySpec {
  max_attempts?: number;
  backoff?: 'exponential' | 'linear' | 'constant';
  initial_delay_ms?: number;
}

/**
 * Wait before retry number `retry` (0 for the first retry). Jitter is "equal jitter": the delay is
 * drawn uniformly from [d/2, d], so clients that failed together spread out, and the profile's
 * formula stays the ceiling.
 */
export function backoffMs(spec: RetrySpec | undefined, retry: number, random: () => number): number {
  const initial = spec?.initial_delay_ms ?? RETRY_DEFAULTS.initial_delay_ms;
  const kind = spec?.backoff ?? RETRY_DEFAULTS.backoff;
  const d = Math.min(kind === 'constant' ? initial : kind === 'linear' ? initial * (retry + 1) : initial * 2 ** retry, MAX_DELAY_MS);
  return Math.round(d / 2 + random() * (d / 2));
}

/**
 * Server-requested wait, ms: `retry-after-ms` (OpenAI), else `Retry-After` as delay-seconds or an
 * HTTP-date (RFC 9110 §10.2.3). Undefined when absent or unreadable.
 */
export function retryAfterMs(headers: { get(name: string): string | null }, nowMs: number): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.ceil(Number(ms));
  const v = headers.get('retry-after')?.trim();
  if (!v) return undefined;
  if (/^\d+(\.\d+)?$/.test(v)) return Math.ceil(Number(v) * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}
