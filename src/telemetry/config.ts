// The Telemetry primitive's spec with the §5.11 defaults applied. The manifest schema has already
// checked shapes and the exporter field rules (crosscheck), so this only fills in what is absent.
import type { TelemetryCategory, RedactionSettings } from './event.ts';

export type ExporterType = 'otlp' | 'file' | 'sqlite' | 'webhook' | 'console';

export interface ExporterSpec {
  type: ExporterType;
  endpoint?: string;
  path?: string;
  auth?: { secret_ref?: string };
  batch?: { max_size?: number; flush_interval_ms?: number };
}

export interface TelemetrySettings {
  exporters: ExporterSpec[];
  events: Record<Exclude<TelemetryCategory, 'metrics' | 'protocol'>, boolean>;
  metrics: { token_usage: boolean; latency_histogram: boolean; cost_usd: boolean };
  sampling: number;
  redaction: RedactionSettings;
}

/** §5.11 "defaults shown". */
export const DEFAULT_EVENTS = {
  tool_calls: true,
  memory_ops: false,
  world_model_ops: false,
  planning_ops: false,
  swarm_ops: false,
  lifecycle: true,
  errors: true,
} as const;

export function telemetrySettings(spec: Record<string, any>): TelemetrySettings {
  return {
    exporters: (spec.exporters ?? []) as ExporterSpec[],
    events: { ...DEFAULT_EVENTS, ...(spec.events ?? {}) },
    metrics: {
      token_usage: spec.metrics?.token_usage ?? true,
      latency_histogram: spec.metrics?.latency_histogram ?? true,
      cost_usd: spec.metrics?.cost_usd ?? false,
    },
    sampling: typeof spec.sampling?.rate === 'number' ? spec.sampling.rate : 1,
    redaction: {
      strip_arguments: spec.redaction?.strip_arguments === true,
      strip_results: spec.redaction?.strip_results === true,
    },
  };
}

/**
 * Whether a category is on. `metrics` follows the metrics switches (checked by the caller per metric);
 * `protocol` (FemtoClaw validation verdicts, docs/telemetry.md) rides with `errors` for rejections and
 * with `tool_calls` otherwise, so no new switch is invented outside the schema.
 */
export function categoryEnabled(s: TelemetrySettings, c: TelemetryCategory): boolean {
  if (c === 'metrics') return s.metrics.token_usage || s.metrics.latency_histogram;
  if (c === 'protocol') return s.events.tool_calls || s.events.errors;
  return s.events[c];
}
