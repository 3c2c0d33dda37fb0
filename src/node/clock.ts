import type { Clock } from '../kernel/ports.ts';

export const systemClock: Clock = {
  now: () => Date.now(),
  // process.hrtime, not performance.now(): the first touch of `performance` loads Node's perf_hooks
  // machinery (~1 ms at start-up), and every user of monotonic() only takes differences.
  monotonic: () => {
    const [s, ns] = process.hrtime();
    return s * 1e3 + ns / 1e6;
  },
  setInterval(fn, ms) {
    const t = setInterval(fn, ms);
    t.unref?.();
    return { cancel: () => clearInterval(t) };
  },
  setTimeout(fn, ms) {
    const t = setTimeout(fn, ms);
    return { cancel: () => clearTimeout(t) };
  },
};
