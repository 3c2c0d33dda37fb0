// The telemetry sink of one session (§5.11): filters by category and sampling, sanitizes, and hands
// each event to every exporter's bounded queue. Nothing here can throw into the agent or make it wait.
import type { Clock, TelemetrySink } from '../kernel/ports.ts';
import type { Redactor } from '../log/redactor.ts';
import { sanitize, type TelemetryCategory, type TelemetryEvent } from './event.ts';
import { categoryEnabled, type TelemetrySettings } from './config.ts';
import { ExportQueue, type Exporter, type QueueStats } from './exporter.ts';
import { LatencyHistograms } from './histogram.ts';

/** Per-exporter defaults where the manifest says nothing (§5.11: "implementation-defined"). */
export const DEFAULT_BATCH_SIZE = 100;
export const DEFAULT_FLUSH_INTERVAL_MS = 5_000;
export const DEFAULT_QUEUE_CAPACITY = 10_000;
/** The longest a session end waits for exporters before giving up on what is still queued. */
export const CLOSE_TIMEOUT_MS = 2_000;

export interface TelemetryDeps {
  clock: Clock;
  /** [0,1) uniform; injectable so sampling is testable. */
  random?: () => number;
  redactor?: Redactor;
  claw: string;
  agent: string;
  onExportError(exporter: string, err: unknown): void;
  /** Called once at session end with the counts, so events lost to a full queue or a failed export are said. */
  onClosed?(stats: TelemetryStats): void;
  queueCapacity?: number;
}

export interface TelemetryStats extends QueueStats {
  sampled_out: number;
  /** At close: events still queued or in flight when the close timeout gave up on a slow exporter. */
  abandoned: number;
}

export class Telemetry implements TelemetrySink {
  private readonly queues: ExportQueue[];
  private readonly histograms = new LatencyHistograms();
  private readonly drainTimer: { cancel(): void } | undefined;
  private sampledOut = 0;
  private closed = false;

  constructor(
    private readonly settings: TelemetrySettings,
    exporters: { exporter: Exporter; batch?: { max_size?: number; flush_interval_ms?: number } }[],
    private readonly deps: TelemetryDeps,
  ) {
    this.queues = exporters.map(
      ({ exporter, batch }) =>
        new ExportQueue(
          exporter,
          {
            maxBatch: batch?.max_size ?? DEFAULT_BATCH_SIZE,
            flushIntervalMs: batch?.flush_interval_ms ?? DEFAULT_FLUSH_INTERVAL_MS,
            capacity: deps.queueCapacity ?? DEFAULT_QUEUE_CAPACITY,
          },
          deps.clock,
          deps.onExportError,
        ),
    );
    if (settings.metrics.latency_histogram) {
      const every = Math.min(DEFAULT_FLUSH_INTERVAL_MS, ...exporters.map((e) => e.batch?.flush_interval_ms ?? DEFAULT_FLUSH_INTERVAL_MS));
      this.drainTimer = deps.clock.setInterval(() => this.emitHistograms(), every);
    }
  }

  emit(category: TelemetryCategory, event: string, fields: Record<string, unknown> = {}): void {
    if (this.closed || !categoryEnabled(this.settings, category)) return;
    // §5.11 sampling.rate: 0.0 = off, 1.0 = every event.
    const rate = this.settings.sampling;
    if (rate < 1 && (rate <= 0 || (this.deps.random ?? Math.random)() >= rate)) {
      this.sampledOut++;
      return;
    }
    const e: TelemetryEvent = {
      ...fields,
      claw: this.deps.claw,
      event,
      category,
      timestamp: new Date(this.deps.clock.now()).toISOString(),
      agent: this.deps.agent,
    };
    const clean = sanitize(e, this.settings.redaction, this.deps.redactor);
    for (const q of this.queues) q.push(clean);
  }

  latency(operation: string, ms: number): void {
    if (!this.closed && this.settings.metrics.latency_histogram) this.histograms.record(operation, ms);
  }

  tokenUsage(provider: string, input: number, output: number): void {
    if (this.settings.metrics.token_usage) this.emit('metrics', 'metrics.token_usage', { provider, input_tokens: input, output_tokens: output });
  }

  stats(): TelemetryStats {
    const sum: TelemetryStats = { exported: 0, dropped: 0, failed: 0, sampled_out: this.sampledOut, abandoned: 0 };
    for (const q of this.queues) {
      sum.exported += q.stats.exported;
      sum.dropped += q.stats.dropped;
      sum.failed += q.stats.failed;
      if (this.closed) sum.abandoned += q.unsent;
    }
    return sum;
  }

  /** Session end: last histograms out, queues flushed (bounded wait), exporters closed. */
  async close(): Promise<TelemetryStats> {
    if (this.closed) return this.stats();
    this.emitHistograms();
    this.closed = true;
    this.drainTimer?.cancel();
    let timer: { cancel(): void } | undefined;
    const timeout = new Promise<void>((resolve) => (timer = this.deps.clock.setTimeout(resolve, CLOSE_TIMEOUT_MS)));
    await Promise.race([Promise.all(this.queues.map((q) => q.close())), timeout]);
    timer?.cancel();
    const stats = this.stats();
    try {
      this.deps.onClosed?.(stats);
    } catch {
      // telemetry never throws into the agent (§5.11)
    }
    return stats;
  }

  private emitHistograms(): void {
    for (const h of this.histograms.drain()) this.emit('metrics', 'metrics.latency', { histogram: h });
  }
}
