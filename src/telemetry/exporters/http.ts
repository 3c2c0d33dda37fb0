// `otlp` and `webhook` exporters (§5.11): a batch is one HTTP POST of JSON. Errors report the status
// only — never a response body (the §5.11 invariant covers what we receive as much as what we send).
// The endpoint comes from the manifest, which the operator controls, so a collector on localhost is
// allowed (no SSRF guard here, unlike tool traffic: docs/telemetry.md).
import type { Exporter } from '../exporter.ts';
import type { TelemetryEvent } from '../event.ts';
import { toOtlpLogs } from './otlp-format.ts';

export const HTTP_EXPORT_TIMEOUT_MS = 10_000;

export class ExportHttpError extends Error {
  constructor(readonly status: number) {
    super(`exporter endpoint answered HTTP ${status}`);
    this.name = 'ExportHttpError';
  }
}

export interface HttpExporterOptions {
  type: 'otlp' | 'webhook';
  endpoint: string;
  /** Bearer token from `auth.secret_ref`, already resolved. */
  token?: string;
  fetch: typeof globalThis.fetch;
  service: { name: string; version?: string };
}

export function httpExporter(o: HttpExporterOptions): Exporter {
  const body = o.type === 'otlp' ? (b: TelemetryEvent[]) => toOtlpLogs(b, o.service) : (b: TelemetryEvent[]) => ({ events: b });
  return {
    type: o.type,
    async export(batch) {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (o.token) headers.authorization = `Bearer ${o.token}`;
      const res = await o.fetch(o.endpoint, {
        method: 'POST',
        headers,
        body: JSON.stringify(body(batch)),
        signal: AbortSignal.timeout(HTTP_EXPORT_TIMEOUT_MS),
      });
      await res.body?.cancel().catch(() => {});
      if (!res.ok) throw new ExportHttpError(res.status);
    },
  };
}
