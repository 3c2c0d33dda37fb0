// One exchange's deadline and its caller's abort as one signal (the network guard's fetches, the A2A client's
// send): `signal` aborts on whichever comes first, and `why()` tells which, so the error can say "timed out"
// or "canceled" without guessing from an AbortError.
import { timerDelay } from './delay.ts';

export interface Deadline {
  readonly signal: AbortSignal;
  why(): 'timeout' | 'aborted' | undefined;
  /** Stops the timer (the exchange answered); the caller's abort still propagates until `unlink`. */
  clearDeadline(): void;
  /** Unhooks the caller's signal: call once the exchange is over. */
  unlink(): void;
}

export function deadline(callerSignal: AbortSignal | undefined, timeoutMs: number): Deadline {
  const ctl = new AbortController();
  let why: 'timeout' | 'aborted' | undefined;
  const stop = (w: 'timeout' | 'aborted') => {
    why ??= w;
    ctl.abort();
  };
  const onAbort = () => stop('aborted');
  callerSignal?.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(() => stop('timeout'), timerDelay(timeoutMs));
  return {
    signal: ctl.signal,
    why: () => why,
    clearDeadline: () => clearTimeout(timer),
    unlink: () => callerSignal?.removeEventListener('abort', onAbort),
  };
}
