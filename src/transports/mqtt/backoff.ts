// Reconnect delays, runtime profile §5: delay = min(initial_delay_ms * 2^attempt, max_delay_ms) with the
// recommended 1000 ms / 30000 ms. The profile's max_attempts (3) bounds retries of one failed *request*; a broker
// connection is retried for as long as the transport is open, at the capped delay (docs/transports.md).
export interface BackoffOptions {
  initialDelayMs: number;
  maxDelayMs: number;
}

export const PROFILE_BACKOFF: BackoffOptions = { initialDelayMs: 1000, maxDelayMs: 30000 };

export function backoffDelay(attempt: number, o: BackoffOptions = PROFILE_BACKOFF): number {
  // 2^attempt overflows to Infinity long after the cap; min() keeps it finite.
  return Math.min(o.initialDelayMs * 2 ** Math.max(0, attempt), o.maxDelayMs);
}
