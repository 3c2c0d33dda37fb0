// Telemetry events (spec §5.11): one flat JSON object per event. Builders elsewhere only ever pass
// names, durations, codes and counts; sanitize() enforces the §5.11 security invariant anyway:
// raw prompts, chain-of-thought and provider response bodies never leave the process, whatever the
// `redaction` settings say, and no secret value survives (runtime profile §7).
import { REDACTED, type Redactor } from '../log/redactor.ts';

/** §5.11 event categories. `metrics` carries the metric samples (token usage, latency histograms). */
export type TelemetryCategory = 'tool_calls' | 'memory_ops' | 'world_model_ops' | 'planning_ops' | 'swarm_ops' | 'lifecycle' | 'errors' | 'metrics' | 'protocol';

export interface TelemetryEvent {
  claw: string;
  event: string;
  category: TelemetryCategory;
  timestamp: string;
  agent?: string;
  [field: string]: unknown;
}

/**
 * Field names that would carry prompt text, model output or reasoning. Dropped at any depth, always
 * (§5.11: "MUST NEVER emit raw prompts, Chain-of-Thought (CoT) content, or provider response bodies").
 */
const FORBIDDEN_FIELDS = new Set([
  'prompt',
  'prompts',
  'system_prompt',
  'messages',
  'completion',
  'raw_output',
  'response_body',
  'body',
  'reasoning',
  'chain_of_thought',
  'thinking',
]);

export interface RedactionSettings {
  strip_arguments: boolean;
  strip_results: boolean;
}

const MAX_DEPTH = 8;

export function sanitize(e: TelemetryEvent, redaction: RedactionSettings, redactor?: Redactor): TelemetryEvent {
  const out = clean(e, 0) as TelemetryEvent;
  // §5.11: strip_arguments → tool arguments replaced by a placeholder; strip_results likewise.
  if (redaction.strip_arguments && 'arguments' in out) out.arguments = REDACTED;
  if (redaction.strip_results && 'result' in out) out.result = REDACTED;
  return redactor ? (redactor.redactValue(out) as TelemetryEvent) : out;
}

function clean(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= MAX_DEPTH) return '[TRUNCATED]';
  if (Array.isArray(value)) return value.map((v) => clean(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (FORBIDDEN_FIELDS.has(k.toLowerCase())) continue;
    out[k] = clean(v, depth + 1);
  }
  return out;
}
