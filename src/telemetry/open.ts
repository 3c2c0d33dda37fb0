// Builds the session's telemetry from the manifest's Telemetry primitive. An exporter that cannot be set
// up (its secret does not resolve) is left out with a warning naming the exporter and the secret_ref:
// telemetry never gates an agent (§5.11 "observability should enhance, never gate").
import type { ResolvedManifest } from '../manifest/resolved.ts';
import type { Clock, Logger } from '../kernel/ports.ts';
import type { Redactor } from '../log/redactor.ts';
import type { SqliteDatabase } from '../memory/sqlite/types.ts';
import { dirnameOf, joinPath } from '../manifest/reader.ts';
import { telemetrySettings, type ExporterSpec } from './config.ts';
import { Telemetry } from './telemetry.ts';
import type { Exporter } from './exporter.ts';
import { consoleExporter } from './exporters/console.ts';
import { fileExporter } from './exporters/file.ts';
import { sqliteExporter } from './exporters/sqlite.ts';
import { httpExporter } from './exporters/http.ts';

export interface OpenTelemetryDeps {
  clock: Clock;
  log: Logger;
  redactor: Redactor;
  resolveSecret(ref: string): Promise<string>;
  fetch: typeof globalThis.fetch;
  writeStderr(line: string): void;
  openSqlite(path: string): Promise<SqliteDatabase>;
  random?: () => number;
}

export async function openTelemetry(m: ResolvedManifest, d: OpenTelemetryDeps): Promise<Telemetry | undefined> {
  const primitive = m.telemetry;
  if (!primitive) return undefined;
  const settings = telemetrySettings(primitive.spec);
  // Relative paths are relative to the file that declares them, like every other manifest reference.
  const baseDir = dirnameOf(primitive.origin.file);
  const exporters: { exporter: Exporter; batch?: ExporterSpec['batch'] }[] = [];
  for (const spec of settings.exporters) {
    try {
      exporters.push({ exporter: await makeExporter(spec, baseDir, m, d), batch: spec.batch });
    } catch (err) {
      d.log.warn('telemetry exporter disabled', { exporter: spec.type, secret_ref: spec.auth?.secret_ref, error: String((err as Error).message ?? err) });
    }
  }
  const warned = new Set<string>();
  return new Telemetry(settings, exporters, {
    clock: d.clock,
    random: d.random,
    redactor: d.redactor,
    claw: m.claw,
    agent: m.identity.name,
    onExportError(exporter, err) {
      // Once per exporter and error text: a dead collector must not flood the log.
      const key = `${exporter}:${String((err as Error)?.message ?? err)}`;
      if (warned.has(key)) return;
      warned.add(key);
      d.log.warn('telemetry export failed', { exporter, error: String((err as Error)?.message ?? err) });
    },
    // The counts of a bounded queue are only worth something if someone sees them: said once, at session end.
    onClosed(stats) {
      if (stats.dropped > 0 || stats.failed > 0 || stats.abandoned > 0) {
        d.log.warn('telemetry events lost', { dropped: stats.dropped, failed: stats.failed, abandoned: stats.abandoned, exported: stats.exported });
      }
    },
  });
}

async function makeExporter(spec: ExporterSpec, baseDir: string, m: ResolvedManifest, d: OpenTelemetryDeps): Promise<Exporter> {
  switch (spec.type) {
    case 'console':
      return consoleExporter(d.writeStderr);
    case 'file':
      return fileExporter(joinPath(baseDir, spec.path!));
    case 'sqlite':
      return sqliteExporter(joinPath(baseDir, spec.path!), d.openSqlite);
    case 'otlp':
    case 'webhook': {
      const token = spec.auth?.secret_ref ? await d.resolveSecret(spec.auth.secret_ref) : undefined;
      return httpExporter({ type: spec.type, endpoint: spec.endpoint!, token, fetch: d.fetch, service: { name: m.identity.name, version: m.version } });
    }
  }
}
