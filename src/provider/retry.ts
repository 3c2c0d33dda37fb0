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
 * The longest wait a date-form Retry-After may come to when read against this host's clock (the longest
 * attempt_deadline_ms). Beyond it, or at or before now, the clock is taken to be wrong — a board without an
 * RTC starts in 1970 and puts every date decades away; one set far ahead puts every date in the past.
 */
export const MAX_CLOCK_WAIT_MS = 3_600_000;

/**
 * Server-requested wait, ms: `retry-after-ms` (OpenAI), else `Retry-After` as delay-seconds or an
 * HTTP-date (RFC 9110 §10.2.3). A date is read against the response's own `Date` header when it has one
 * (RFC 9110 §6.6.1: both come from the server's clock, so this host's clock does not matter; a date at or
 * before it is 0), else against `nowMs`, trusted only for a wait in (0, MAX_CLOCK_WAIT_MS]. Undefined when
 * absent, unreadable or untrusted: the caller's backoff applies.
 */
export function retryAfterMs(headers: { get(name: string): string | null }, nowMs: number): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.ceil(Number(ms));
  const v = headers.get('retry-after')?.trim();
  if (!v) return undefined;
  if (/^\d+(\.\d+)?$/.test(v)) return Math.ceil(Number(v) * 1000);
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  const served = Date.parse(headers.get('date') ?? '');
  if (!Number.isNaN(served)) return Math.max(0, at - served);
  const wait = at - nowMs;
  return wait > 0 && wait <= MAX_CLOCK_WAIT_MS ? wait : undefined;
}
