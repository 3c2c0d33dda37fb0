// Runs work that may answer synchronously or with a promise, and reports its duration and outcome
// once it is known, without turning a synchronous answer into a promise (the tool-call and memory
// fast paths stay synchronous). Used by the §5.11 telemetry wrappers.
import type { Clock } from '../kernel/ports.ts';

/**
 * `report(durationMs, value)` after success, `report(durationMs, undefined, err)` after a failure (`err`
 * is never undefined then, even for `throw undefined`); the outcome is passed on unchanged.
 */
export function timed<T>(clock: Clock, work: () => T | Promise<T>, report: (durationMs: number, value: T | undefined, err?: unknown) => void): T | Promise<T> {
  const started = clock.monotonic();
  const ms = () => Math.round((clock.monotonic() - started) * 1000) / 1000;
  let r: T | Promise<T>;
  try {
    r = work();
  } catch (e) {
    report(ms(), undefined, e ?? new Error('thrown'));
    throw e;
  }
  if (!(r instanceof Promise)) {
    report(ms(), r);
    return r;
  }
  return r.then(
    (v) => (report(ms(), v), v),
    (e) => {
      report(ms(), undefined, e ?? new Error('rejected'));
      throw e;
    },
  );
}
