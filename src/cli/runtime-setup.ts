// What `claw run` and `claw chat` share before a runtime starts: runtime configuration, logger,
// launch manifest, secrets, data directory and the builtin worker command. Invalid configuration or
// manifest issues are logged (file:line:col, path, rule) and reported as exit code 1.
import { realpathSync } from 'node:fs';
import { loadManifestFile } from '../manifest/loader.ts';
import { formatIssue, type ManifestIssue } from '../manifest/issues.ts';
import { loadRuntimeConfig } from '../config/load-config.ts';
import { dirnameOf, joinPath } from '../manifest/reader.ts';
import { createLogger, type LogLevel } from '../log/logger.ts';
import { Redactor } from '../log/redactor.ts';
import { SecretResolver } from '../kernel/secrets.ts';
import { ClawError } from '../protocol/errors.ts';
import type { RuntimeConfig } from '../config/runtime-config.ts';
import type { ResolvedManifest } from '../manifest/resolved.ts';
import type { WorkerCommand } from '../tools/builtins/impl.ts';
import type { CliEnv } from './env.ts';
import type { ParsedArgs } from './args.ts';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'];

export interface RuntimeSetup {
  log: ReturnType<typeof createLogger>;
  config: RuntimeConfig;
  configFile?: string;
  manifestFile?: string;
  launchManifest?: ResolvedManifest;
  redactor: Redactor;
  secrets: SecretResolver;
  dataDir: string;
  worker?: WorkerCommand;
}

/** Returns the setup, or the exit code when configuration or manifest is invalid (already logged). */
export async function prepareRuntime(env: CliEnv, args: ParsedArgs, o: { defaultLogLevel?: LogLevel } = {}): Promise<RuntimeSetup | number> {
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

  let launchManifest: ResolvedManifest | undefined;
  if (manifestFile) {
    const loaded = await loadManifestFile(manifestFile, { reader: env.reader, registries: cfg.config.registries });
    if (!loaded.manifest) return reportInvalid(log, 'manifest invalid', loaded.issues);
    launchManifest = loaded.manifest;
  }
  const secrets = new SecretResolver(
    {
      env: cfg.config.secrets?.env === false ? undefined : env.env,
      dir: cfg.config.secrets?.dir ?? env.env.CLAW_SECRETS_DIR,
      readFile: async (p, o) => new TextDecoder().decode(await env.reader.read(p, o)),
    },
    redactor,
    (ref) => log.warn('secret too short to be redacted from logs and tool output (fewer than 4 characters)', { secret_ref: ref }),
  );
  // State lives in data_dir (claw.runtime.yaml), by default .claw-data beside the manifest.
  const dataDir = cfg.config.data_dir ?? joinPath(manifestFile ? dirnameOf(manifestFile) : env.cwd, '.claw-data');
  const worker = env.self && workerCommand(env.self);
  return { log, config: cfg.config, configFile: cfg.file, manifestFile: manifestFile || undefined, launchManifest, redactor, secrets, dataDir, worker };
}

/**
 * The builtin worker command. `binds` is resolved on first read: two realpathSync calls (each an lstat per path
 * component) that only a builtin run in a worker needs, not every start (docs/startup.md).
 */
function workerCommand(self: { argv0: string; args: string[]; reads?: string[] }): WorkerCommand {
  let binds: string[] | undefined;
  return {
    argv0: self.argv0,
    args: self.args,
    get binds() {
      return (binds ??= selfBinds(self));
    },
  };
}

/** The interpreter, the bundle and what it reads, by their real paths: a builtin worker must be able to read them. */
function selfBinds(self: { argv0: string; args: string[]; reads?: string[] }): string[] {
  return [self.argv0, ...self.args, ...(self.reads ?? [])].map((p) => {
    try {
      return realpathSync(p);
    } catch {
      return p;
    }
  });
}

function reportInvalid(log: ReturnType<typeof createLogger>, msg: string, issues: ManifestIssue[]): number {
  for (const i of issues) log.error(msg, { issue: formatIssue(i), file: i.file, path: i.path, rule: i.rule, line: i.pos?.line, col: i.pos?.col });
  return 1;
}
