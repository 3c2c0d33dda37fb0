// Per-client request rate (docs/transports.md, HTTP "Limits"): a sliding one-minute window per client address,
// approximated by two fixed windows (the previous one weighted by how much of it still overlaps), so memory is
// two counters per client. The table is bounded: past `maxClients`, stale entries go first, then the oldest.
// `now` is a monotonic reading (the host's clock.monotonic): windows are spans of time, not dates.
export interface RateLimiter {
  /** Count one request from `key`; returns 0 when allowed, else the seconds after which to retry. */
  take(key: string): number;
}

const WINDOW_MS = 60_000;

export function createRateLimiter(perMinute: number, now: () => number, maxClients = 10_000): RateLimiter {
  if (perMinute <= 0) return { take: () => 0 };
  const table = new Map<string, { start: number; count: number; previous: number }>();
  return {
    take(key) {
      const t = now();
      const windowStart = t - (t % WINDOW_MS);
      let e = table.get(key);
      if (!e) {
        if (table.size >= maxClients) prune(table, windowStart, maxClients);
        e = { start: windowStart, count: 0, previous: 0 };
        table.set(key, e);
      } else if (e.start !== windowStart) {
        e.previous = e.start === windowStart - WINDOW_MS ? e.count : 0;
        e.start = windowStart;
        e.count = 0;
      }
      const overlap = 1 - (t - windowStart) / WINDOW_MS;
      if (e.count + e.previous * overlap >= perMinute) return Math.max(1, Math.ceil((windowStart + WINDOW_MS - t) / 1000));
      e.count++;
      return 0;
    },
  };
}

/**
 * The rate limit's key for a peer address: an IPv6 address by its /64 (one host or home network gets a whole /64
 * and may pick any address in it for each request, RFC 4941/8981), an IPv4-mapped one as the IPv4 address,
 * anything else as it is.
 */
export function rateKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  if (!address.includes(':')) return address;
  const [head, tail = ''] = address.split('%')[0].toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = address.includes('::') && tail ? tail.split(':') : [];
  const groups = address.includes('::') ? [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right] : left;
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

function prune(table: Map<string, { start: number }>, windowStart: number, maxClients: number): void {
  for (const [k, e] of table) if (e.start < windowStart - 60_000) table.delete(k);
  // Still full: drop the oldest inserted entries (a flood of distinct addresses must not grow memory).
  const it = table.keys();
  while (table.size >= maxClients) table.delete(it.next().value as string);
}
