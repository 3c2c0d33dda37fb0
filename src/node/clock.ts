import type { Clock } from '../kernel/ports.ts';
import { timerDelay } from '../protocol/delay.ts';

export const systemClock: Clock = {
  now: () => Date.now(),
  // process.hrtime, not performance.now(): the first touch of `performance` loads Node's perf_hooks
  // machinery (~1 ms at start-up), and every user of monotonic() only takes differences.
  monotonic: () => {
    const [s, ns] = process.hrtime();
    return s * 1e3 + ns / 1e6;
  },
  // Armed from the next check phase (setImmediate), not now: a process's first timer costs ~0.3 ms of Node's
  // timer-list set-up, and the first interval armed is the heartbeat's, at READY, i.e. between a
  // claw.initialize request and its reply (docs/startup.md). The interval starts at most one turn
  // of the event loop later; cancel() before then leaves nothing armed. Unref'd, like the interval itself.
  setInterval(fn, ms) {
    let t: ReturnType<typeof setInterval> | undefined;
    let cancelled = false;
    const arm = setImmediate(() => {
      if (cancelled) return;
      t = setInterval(fn, timerDelay(ms));
      t.unref?.();
    });
    arm.unref?.();
    return {
      cancel: () => {
        cancelled = true;
        clearImmediate(arm);
        if (t !== undefined) clearInterval(t);
      },
    };
  },
  setTimeout(fn, ms) {
    const t = setTimeout(fn, timerDelay(ms));
    return { cancel: () => clearTimeout(t) };
  },
};
