import type { Clock } from '../kernel/ports.ts';

export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
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
