// `claw run [manifest]`: load, validate, then serve CKP over stdio until stdin closes or a signal.
import { loadManifestFile } from '../manifest/loader.ts';
import { formatIssue, type ManifestIssue } from '../manifest/issues.ts';
import { loadRuntimeConfig } from '../config/load-config.ts';
import { dirnameOf, joinPath } from '../manifest/reader.ts';
import { createLogger, type LogLevel } from '../log/logger.ts';
import { Redactor } from '../log/redactor.ts';
import { SecretResolver } from '../kernel/secrets.ts';
import { createStdioTransport } from '../transports/stdio.ts';
import { checkSchemes, listenEntries, openTransports } from '../transports/listen.ts';
import { startRuntime } from '../runtime/start.ts';
import { parseArgs } from './args.ts';
import { RUN_HELP } from './help.ts';
import type { CliEnv } from './env.ts';
import { ClawError } from '../protocol/errors.ts';
import { createFileLedgerStore } from '../node/ledger-file.ts';
import { realpathSync } from 'node:fs';

const LEVELS = ['debug', 'info', 'warn', 'error'];

export async function runCommand(env: CliEnv, argv: string[]): Promise<number> {
  const args = parseArgs(argv, { values: ['config', 'log-level', 'listen'] });
  if (args.flags.has('help')) {
    env.stdout.write(RUN_HELP);
    return 0;
  }
  if (args.positionals.length > 1) throw new ClawError('usage', 'expected at most one manifest');
  const logLevelArg = args.values.get('log-level')?.[0];
  if (logLevelArg && !LEVELS.includes(logLevelArg)) throw new ClawError('usage', `--log-level must be one of ${LEVELS.join(', ')}`);

  const redactor = env.redactor ?? new Redactor();
  const manifestFile = args.positionals[0] && joinPath(env.cwd, args.positionals[0]);
  const explicit = args.values.get('config')?.[0];
  const cfg = await loadRuntimeConfig(env.reader, {
    explicit: explicit && joinPath(env.cwd, explicit),
    besideDir: manifestFile ? dirnameOf(manifestFile) : env.cwd,
  });
  const level = (logLevelArg ?? cfg.config.log?.level ?? 'info') as LogLevel;
  const log = createLogger({ write: (s) => env.stderr.write(s), level, redactor, now: env.clock.now });
  if (cfg.issues.length > 0) return reportInvalid(log, 'runtime configuration invalid', cfg.issues);
  // --listen URIs and claw.runtime.yaml `transports:` (docs/transports.md); a bad scheme is a usage error.
  const listen = listenEntries(args.values.get('listen') ?? [], cfg.config);
  checkSchemes(listen);

  let launchManifest;
  if (manifestFile) {
    const loaded = await loadManifestFile(manifestFile, { reader: env.reader, registries: cfg.config.registries });
    if (!loaded.manifest) return reportInvalid(log, 'manifest invalid', loaded.issues);
    launchManifest = loaded.manifest;
  }

  const secrets = new SecretResolver(
    {
      env: cfg.config.secrets?.env === false ? undefined : env.env,
      dir: cfg.config.secrets?.dir ?? env.env.CLAW_SECRETS_DIR,
      readFile: env.readText,
    },
    redactor,
    (ref) => log.warn('secret too short to be redacted from logs and tool output (fewer than 4 characters)', { secret_ref: ref }),
  );
  const stdio = createStdioTransport({ input: env.stdin, output: env.stdout, maxFrameBytes: cfg.config.limits?.max_frame_bytes });
  // State lives in data_dir (claw.runtime.yaml), by default .claw-data beside the manifest.
  const dataDir = cfg.config.data_dir ?? joinPath(manifestFile ? dirnameOf(manifestFile) : env.cwd, '.claw-data');
  const worker = env.self && { argv0: env.self.argv0, args: env.self.args, binds: selfBinds(env.self) };
  const extra = await openTransports(listen, {
    log,
    clock: env.clock,
    baseDir: env.cwd,
    configDir: cfg.file ? dirnameOf(cfg.file) : undefined,
    dataDir,
    maxFrameBytes: cfg.config.limits?.max_frame_bytes,
    secrets,
    agentName: launchManifest?.name,
  });
  const runtime = startRuntime({
    redactor,
    ledgerStore: createFileLedgerStore(dataDir),
    dataDir,
    env: env.env,
    version: env.version,
    worker,
    writeStderr: (text) => env.stderr.write(text),
    config: cfg.config,
    log,
    clock: env.clock,
    reader: env.reader,
    cwd: env.cwd,
    secrets,
    launchManifest,
    transports: [stdio, ...extra],
  });
  // Handlers first: a supervisor may signal as soon as it sees the "runtime started" line.
  const stopped = new Promise<string>((resolve) => {
    env.onSignal('SIGTERM', () => resolve('SIGTERM'));
    env.onSignal('SIGINT', () => resolve('SIGINT'));
    // stdin EOF ends a stdio-only runtime. With other listeners it does not: a daemon started with
    // stdin=/dev/null keeps serving them until a signal, or until every one of them has closed.
    if (extra.length === 0) void stdio.closed.then(() => resolve('stdin closed'));
    else {
      void stdio.closed.then(() => log.info('stdin closed; still serving', { transports: extra.map((t) => t.name) }));
      void Promise.all(extra.map((t) => t.closed)).then(() => resolve('all transports closed'));
    }
  });
  log.info('runtime started', { version: env.version, manifest: manifestFile, config: cfg.file, agent: launchManifest?.name });
  const reason = await stopped;
  await runtime.stop(reason);
  log.info('runtime exiting', { reason });
  return 0;
}

/** The interpreter and the bundle, by their real paths: a builtin worker must be able to read them. */
function selfBinds(self: { argv0: string; args: string[] }): string[] {
  return [self.argv0, ...self.args].map((p) => {
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
