// One exporter behind a bounded queue. Telemetry never blocks the agent and never changes its
// behaviour (§5.11): emit() only pushes; a full queue drops the event and counts it; export errors
// are counted and logged once per kind, never thrown.
import type { TelemetryEvent } from './event.ts';

export interface Exporter {
  readonly type: string;
  export(batch: TelemetryEvent[]): Promise<void>;
  close?(): Promise<void>;
}

export interface ExportTimers {
  setTimeout(fn: () => void, ms: number): { cancel(): void };
}

export interface QueueOptions {
  /** Events per export call (exporter `batch.max_size`). */
  maxBatch: number;
  /** Longest an event waits before its batch is sent (exporter `batch.flush_interval_ms`). */
  flushIntervalMs: number;
  /** Events held while the exporter is busy or waiting; beyond this new events are dropped. */
  capacity: number;
}

export interface QueueStats {
  exported: number;
  dropped: number;
  failed: number;
}

export class ExportQueue {
  private pending: TelemetryEvent[] = [];
  private timer: { cancel(): void } | undefined;
  private inFlight: Promise<void> | undefined;
  private inFlightSize = 0;
  readonly stats: QueueStats = { exported: 0, dropped: 0, failed: 0 };

  /** Events accepted but not yet exported or failed: queued, or in a batch the exporter still holds. */
  get unsent(): number {
    return this.pending.length + this.inFlightSize;
  }

  constructor(
    private readonly exporter: Exporter,
    private readonly opts: QueueOptions,
    private readonly timers: ExportTimers,
    private readonly onError: (exporter: string, err: unknown) => void,
  ) {}

  push(e: TelemetryEvent): void {
    if (this.pending.length >= this.opts.capacity) {
      this.stats.dropped++;
      return;
    }
    this.pending.push(e);
    if (this.pending.length >= this.opts.maxBatch) this.kick();
    else if (!this.timer) this.timer = this.timers.setTimeout(() => this.kick(), this.opts.flushIntervalMs);
  }

  /** Sends everything queued now; resolves when the exporter has taken it (or failed). */
  async flush(): Promise<void> {
    while (this.pending.length > 0 || this.inFlight) {
      if (this.inFlight) await this.inFlight;
      else this.kick();
    }
  }

  async close(): Promise<void> {
    await this.flush();
    await this.exporter.close?.().catch((err) => this.onError(this.exporter.type, err));
  }

  private kick(): void {
    this.timer?.cancel();
    this.timer = undefined;
    if (this.inFlight || this.pending.length === 0) return;
    const batch = this.pending.splice(0, this.opts.maxBatch);
    this.inFlightSize = batch.length;
    this.inFlight = this.exporter
      .export(batch)
      .then(
        () => {
          this.stats.exported += batch.length;
        },
        (err) => {
          this.stats.failed += batch.length;
          this.onError(this.exporter.type, err);
        },
      )
      .finally(() => {
        this.inFlight = undefined;
        this.inFlightSize = 0;
        if (this.pending.length >= this.opts.maxBatch) this.kick();
        else if (this.pending.length > 0 && !this.timer) this.timer = this.timers.setTimeout(() => this.kick(), this.opts.flushIntervalMs);
      });
  }
}
