// Defaults for omitted optional fields, applied to a ResolvedManifest after validation so the
// kernel never has to know them. Only defaults that the spec, the runtime profile or the official
// JSON schemas state are applied, each with its source; nothing is invented here.
//   profile = clawkernel runtime profile §1 "Default Values" (0.2.0 and 0.3.0 have the same table)
//   schema  = the `default` keyword (or "Default: ..." description) in /spec/schema/*.schema.json
// A default is only written where the field is absent (`undefined`); present values, even wrong
// ones, are left for the schema and the cross-checks to report.
import type { ResolvedManifest, ResolvedPrimitive } from './resolved.ts';

type Obj = Record<string, any>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function setDefault(o: Obj, key: string, value: unknown): void {
  if (o[key] === undefined) o[key] = value;
}

/** The object at `o[key]`, created when absent; undefined when present but not an object. */
function objectAt(o: Obj, key: string): Obj | undefined {
  if (o[key] === undefined) o[key] = {};
  return isObj(o[key]) ? o[key] : undefined;
}

function specOf(p: ResolvedPrimitive | undefined): Obj | undefined {
  return p && isObj(p.spec) ? p.spec : undefined;
}

/**
 * Sandbox `runtime` inferred from `level` (profile §1: "Inferred from level (e.g., container →
 * docker)"). The schema enum is docker | apple-container | wasmtime | firecracker | gvisor | native
 * and is not tied to levels, so only levels that spec §5.8 pins to one enum value are inferred:
 *   - container → docker: the profile's own example; §5.8 "Docker/Apple Container" lists docker first.
 *   - wasm → wasmtime: the only WebAssembly runtime in the enum (§5.8 table: "IronClaw (wasmtime)").
 * Left absent on purpose:
 *   - none: "No isolation. Tool runs in agent process." — there is no sandbox runtime to name.
 *   - process: "Separate OS process with limited permissions" — the spec names no runtime for it;
 *     `native` is never tied to a level anywhere, so choosing it would be our invention.
 *   - vm: "reserved for future" in §5.8, and the enum holds two candidates (firecracker, gvisor).
 */
export const SANDBOX_RUNTIME_BY_LEVEL: Readonly<Record<string, string>> = {
  container: 'docker',
  wasm: 'wasmtime',
};

/** Telemetry `events` defaults (spec §5.11 "Event Categories", schema `default`s). */
const TELEMETRY_EVENTS_02: Obj = { tool_calls: true, memory_ops: false, swarm_ops: false, lifecycle: true, errors: true };
/** Added in 0.3.0 (absent from the 0.2.0 schema, where additionalProperties is false). */
const TELEMETRY_EVENTS_03: Obj = { world_model_ops: false, planning_ops: false };
/** Telemetry `metrics` defaults (spec §5.11 "defaults shown", schema `default`s). */
const TELEMETRY_METRICS_02: Obj = { token_usage: true, cost_usd: false, latency_histogram: true };
const TELEMETRY_METRICS_03: Obj = { prediction_error: false, retrieval_hit_rate: false, plan_revision_count: false };

/** Apply all defaults in place. Idempotent. */
export function applyDefaults(m: ResolvedManifest): void {
  const gen03 = m.generation === '0.3';

  const identity = specOf(m.identity);
  if (identity) {
    // spec §5.1 "If omitted, the runtime SHOULD default to supervised"; profile §1; schema default.
    setDefault(identity, 'autonomy', 'supervised');
    // profile §1: Identity locale "en-US".
    setDefault(identity, 'locale', 'en-US');
  }

  for (const p of m.providers) {
    const spec = specOf(p);
    if (!spec) continue;
    // profile §1: Provider streaming false.
    setDefault(spec, 'streaming', false);
    // schema provider.transport: "default": "http".
    setDefault(spec, 'transport', 'http');
    // schema provider.capabilities description: "Default: ['text']".
    setDefault(spec, 'capabilities', ['text']);
  }

  for (const c of m.channels) {
    const spec = specOf(c);
    // spec §5.3 Event-Driven Trigger Semantics: "If trigger.max_parallel is omitted, runtimes MUST
    // default it to 1. If trigger.overlap_policy is omitted, runtimes MUST default it to skip."
    // (schema defaults too). Only inside an existing trigger block: channels without one are not
    // event-driven, and §5.3 asks manifests (not runtimes) to provide the block.
    // access_control.mode has no default: profile §1 says "Implementation-defined".
    if (spec && isObj(spec.trigger)) {
      setDefault(spec.trigger, 'max_parallel', 1);
      setDefault(spec.trigger, 'overlap_policy', 'skip');
    }
  }

  for (const t of m.tools) {
    const spec = specOf(t);
    // schema tool.composite: "default": false.
    if (spec) setDefault(spec, 'composite', false);
  }

  for (const w of m.worldModels) {
    const spec = specOf(w);
    // spec §5.7 Validation Rules: "scope defaults to agent-wide when omitted".
    if (spec) setDefault(spec, 'scope', 'agent-wide');
  }

  const sandbox = specOf(m.sandbox);
  if (sandbox && sandbox.runtime === undefined && typeof sandbox.level === 'string') {
    // profile §1: Sandbox runtime "Inferred from level" — see SANDBOX_RUNTIME_BY_LEVEL.
    if (Object.hasOwn(SANDBOX_RUNTIME_BY_LEVEL, sandbox.level)) sandbox.runtime = SANDBOX_RUNTIME_BY_LEVEL[sandbox.level];
  }

  for (const p of m.policies) {
    const spec = specOf(p);
    // profile §1: Policy prompt_injection.detection "pattern". Only inside an existing block:
    // creating the block would switch detection on for policies that never asked for it.
    if (spec && isObj(spec.prompt_injection)) setDefault(spec.prompt_injection, 'detection', 'pattern');
  }

  const telemetry = specOf(m.telemetry);
  if (telemetry) {
    // spec §5.11: sampling.rate "(default: 1.0)"; schema sampling.rate "default": 1.0.
    const sampling = objectAt(telemetry, 'sampling');
    if (sampling) setDefault(sampling, 'rate', 1);
    // spec §5.11 "Which event categories to emit (defaults shown)"; schema events.* defaults.
    const events = objectAt(telemetry, 'events');
    if (events) {
      for (const [k, v] of Object.entries(TELEMETRY_EVENTS_02)) setDefault(events, k, v);
      if (gen03) for (const [k, v] of Object.entries(TELEMETRY_EVENTS_03)) setDefault(events, k, v);
    }
    // spec §5.11 "Which metrics to collect (defaults shown)"; schema metrics.* defaults.
    const metrics = objectAt(telemetry, 'metrics');
    if (metrics) {
      for (const [k, v] of Object.entries(TELEMETRY_METRICS_02)) setDefault(metrics, k, v);
      if (gen03) for (const [k, v] of Object.entries(TELEMETRY_METRICS_03)) setDefault(metrics, k, v);
    }
    // spec §5.11 redaction example values; schema redaction.strip_* "default": false.
    const redaction = objectAt(telemetry, 'redaction');
    if (redaction) {
      setDefault(redaction, 'strip_arguments', false);
      setDefault(redaction, 'strip_results', false);
    }
  }
}
