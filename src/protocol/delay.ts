// Durations from outside (wire params, manifest, claw.runtime.yaml) handed to a timer. Node's timers hold a signed
// 32-bit millisecond count: a longer delay fires after 1 ms instead (and prints a non-JSON TimeoutOverflowWarning
// on stderr), so `timeout_ms: 3000000000` would become "at once". Every such delay goes through timerDelay().

/** The longest delay a timer keeps (2^31 − 1 ms, about 24.8 days): longer means "practically never". */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** `ms` as a timer can take it: NaN and negatives → 0, fractions floored, above MAX_TIMER_MS → MAX_TIMER_MS. */
export function timerDelay(ms: number): number {
  if (!(ms > 0)) return 0;
  return ms >= MAX_TIMER_MS ? MAX_TIMER_MS : Math.floor(ms);
}
