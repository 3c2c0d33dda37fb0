// Telemetry rules, spec §5.11.
import type { Checker } from './context.ts';
import { describe, isBlank, isObj, specOf } from './context.ts';

const S = '§5.11';

/** Field each exporter type requires (§5.11 Exporter Types table and Validation Rules). */
const REQUIRED_FIELD: Record<string, 'endpoint' | 'path'> = {
  otlp: 'endpoint',
  webhook: 'endpoint',
  file: 'path',
  sqlite: 'path',
};

export function checkTelemetry(c: Checker): void {
  const t = c.m.telemetry;
  const spec = specOf(t);
  if (!t || !spec) return;

  // "For exporter type otlp or webhook, the endpoint field is REQUIRED ... For type file or
  // sqlite, the path field is REQUIRED. If omitted, the runtime MUST reject the manifest."
  // telemetry.schema.json has no type-dependent requirement, so this is cross-check only.
  if (Array.isArray(spec.exporters)) {
    spec.exporters.forEach((e: unknown, i: number) => {
      if (!isObj(e) || typeof e.type !== 'string' || !Object.hasOwn(REQUIRED_FIELD, e.type)) return;
      const field = REQUIRED_FIELD[e.type];
      if (isBlank(e[field])) {
        c.report(t, ['exporters', i, field], `telemetry-exporter-${field}`, S, `${describe(t)}: exporter type '${e.type}' requires ${field}`);
      }
    });
  }
  // sampling.rate in [0, 1] is the schema's minimum/maximum, applied before cross-checks.
}
