// The runtime's side of telemetry (spec §5.11): the telemetry code, and the SQLite layer for the
// `sqlite` exporter, load only when a manifest declares a Telemetry primitive.
import type { ResolvedManifest } from '../manifest/resolved.ts';
import type { TelemetrySink, Clock, Logger } from '../kernel/ports.ts';
import type { Redactor } from '../log/redactor.ts';
import type { SecretResolver } from '../kernel/secrets.ts';

export interface TelemetryRuntimeDeps {
  clock: Clock;
  log: Logger;
  redactor: Redactor;
  secrets: SecretResolver;
  /** Where the `console` exporter writes (the host's stderr: stdout carries protocol only). */
  writeStderr: (text: string) => void;
}

export async function openSessionTelemetry(m: ResolvedManifest, d: TelemetryRuntimeDeps): Promise<TelemetrySink | undefined> {
  if (!m.telemetry) return undefined;
  const { openTelemetry } = await import('../telemetry/open.ts');
  return openTelemetry(m, {
    clock: d.clock,
    log: d.log,
    redactor: d.redactor,
    resolveSecret: (ref) => d.secrets.resolve(ref),
    fetch: globalThis.fetch,
    writeStderr: d.writeStderr,
    openSqlite: async (path) => (await import('../memory/sqlite/open.ts')).openDatabase({ path }),
  });
}
