// What `claw run` and `claw chat` share before a runtime starts: the runtime configuration and the launch
// manifest named on the command line, read and checked, then composed with the host (src/runtime/compose.ts).
// Invalid configuration or manifest issues are logged (file:line:col, path, rule) and reported as exit code 1.
import { loadManifestFile } from '../manifest/loader.ts';
import { formatIssue, type ManifestIssue } from '../manifest/issues.ts';
import { loadRuntimeConfig } from '../config/load-config.ts';
import { dirnameOf, joinPath } from '../manifest/reader.ts';
import { createLogger, type LogLevel } from '../log/logger.ts';
import { Redactor } from '../log/redactor.ts';
import { ClawError } from '../protocol/errors.ts';
import type { Logger } from '../kernel/ports.ts';
import { composeRuntime, type ComposedRuntime } from '../runtime/compose.ts';
import type { CliEnv } from './env.ts';
import type { ParsedArgs } from './args.ts';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'];

/** The composed runtime, or the exit code when configuration or manifest is invalid (already logged). */
export async function prepareRuntime(env: CliEnv, args: ParsedArgs, o: { defaultLogLevel?: LogLevel } = {}): Promise<ComposedRuntime | number> {
  const logLevelArg = args.values.get('log-level')?.[0];
  if (logLevelArg && !LOG_LEVELS.includes(logLevelArg)) throw new ClawError('usage', `--log-level must be one of ${LOG_LEVELS.join(', ')}`);
  const redactor = env.redactor ?? new Redactor();
  const manifestFile = args.positionals[0] && joinPath(env.cwd, args.positionals[0]);
  const explicit = args.values.get('config')?.[0];
  const cfg = await loadRuntimeConfig(env.reader, {
    explicit: explicit && joinPath(env.cwd, explicit),
    besideDir: manifestFile ? dirnameOf(manifestFile) : env.cwd,
  });
  const level = (logLevelArg ?? cfg.config.log?.level ?? o.defaultLogLevel ?? 'info') as LogLevel;
  const log = createLogger({ write: (s) => env.stderr.write(s), level, redactor, now: env.clock.now });
  if (cfg.issues.length > 0) return reportInvalid(log, 'runtime configuration invalid', cfg.issues);
  let manifest;
  if (manifestFile) {
    const loaded = await loadManifestFile(manifestFile, { reader: env.reader, registries: cfg.config.registries });
    if (!loaded.manifest) return reportInvalid(log, 'manifest invalid', loaded.issues);
    manifest = loaded.manifest;
  }
  return composeRuntime({ host: env, redactor, config: cfg.config, configFile: cfg.file, manifest, manifestFile: manifestFile || undefined, log });
}

function reportInvalid(log: Logger, msg: string, issues: ManifestIssue[]): number {
  for (const i of issues) log.error(msg, { issue: formatIssue(i), file: i.file, path: i.path, rule: i.rule, line: i.pos?.line, col: i.pos?.col });
  return 1;
}
