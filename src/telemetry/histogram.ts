// Latency histograms (§5.11 metrics.latency_histogram): fixed buckets in ms, one histogram per
// operation name; drained into a `metrics.latency` event at each flush and at session end.
export const LATENCY_BUCKETS_MS = [1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000] as const;

export interface HistogramSnapshot {
  name: string;
  count: number;
  sum_ms: number;
  /** Upper bounds in ms; the last count (one more than bounds) is the overflow bucket. */
  bounds_ms: readonly number[];
  counts: number[];
}

export class LatencyHistograms {
  private readonly byName = new Map<string, { count: number; sum: number; counts: number[] }>();

  record(name: string, ms: number): void {
    let h = this.byName.get(name);
    if (!h) this.byName.set(name, (h = { count: 0, sum: 0, counts: new Array(LATENCY_BUCKETS_MS.length + 1).fill(0) }));
    h.count++;
    h.sum += ms;
    let i = 0;
    while (i < LATENCY_BUCKETS_MS.length && ms > LATENCY_BUCKETS_MS[i]!) i++;
    h.counts[i]!++;
  }

  /** Returns and resets what was recorded since the last drain. */
  drain(): HistogramSnapshot[] {
    const out = [...this.byName].map(([name, h]) => ({ name, count: h.count, sum_ms: Math.round(h.sum * 1000) / 1000, bounds_ms: LATENCY_BUCKETS_MS, counts: h.counts }));
    this.byName.clear();
    return out;
  }
}
