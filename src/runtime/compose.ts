// The composition root: one function builds a runtime from (manifest, runtime configuration, host). Every command
// takes what it needs from the result: `claw run` and `claw chat` start it with their transports, `claw send`
// connects through its client schemes with its secrets, `claw pair` reads its data directory. The host
// (./host.ts) is the only source of environment, working directory, clock, files and stderr; the scheme tables
// are the constants of ./schemes.ts. Building it has no effect: nothing is read, opened or started until a
// command asks.
import type { RuntimeConfig } from '../config/runtime-config.ts';
import type { ResolvedManifest } from '../manifest/resolved.ts';
import type { KernelModule } from '../kernel/agent.ts';
import type { Logger, Transport } from '../kernel/ports.ts';
import { SecretResolver } from '../kernel/secrets.ts';
import { dirnameOf, joinPath } from '../manifest/reader.ts';
import { createLogger, type LogLevel } from '../log/logger.ts';
import { Redactor } from '../log/redactor.ts';
import { createFileLedgerStore } from '../node/ledger-file.ts';
import { listenEntries, openTransports } from '../transports/listen.ts';
import { connectClient, type TransportClient } from '../transports/client.ts';
import type { WorkerCommand } from '../tools/builtins/impl.ts';
import { CLIENT_SCHEMES, LISTEN_SCHEMES } from './schemes.ts';
import { startRuntime, type Runtime } from './start.ts';
import { workerCommand } from './worker-command.ts';
import type { RuntimeHost } from './host.ts';

export interface ComposeInput {
  host: RuntimeHost;
  config: RuntimeConfig;
  /** The launch manifest: authoritative for the session when present. */
  manifest?: ResolvedManifest;
  /** Where the manifest was read: data_dir defaults to `.claw-data` beside it. */
  manifestFile?: string;
  /** claw.runtime.yaml, when one was read: its relative paths resolve against its directory. */
  configFile?: string;
  /** Default: JSON lines on the host's stderr, at `log.level` of the configuration (else `info`). */
  log?: Logger;
  /** The redactor `log` writes through, which resolved secrets register with. Default: the host's, else a new one. */
  redactor?: Redactor;
}

export interface StartOptions {
  /** Where operator frames arrive and notifications go (stdio, `--listen` transports, the chat channel). */
  transports: Transport[];
  /** The FemtoClaw agent loop runs here (`claw chat`); queue channels in the configuration turn it on too. */
  agentLoop?: boolean;
  /** Tags stored with each conversation entry the default agent records (channel, user). */
  historyTags?: Record<string, unknown>;
  modules?: KernelModule[];
}

export interface ComposedRuntime {
  host: RuntimeHost;
  config: RuntimeConfig;
  configFile?: string;
  manifestFile?: string;
  launchManifest?: ResolvedManifest;
  log: Logger;
  redactor: Redactor;
  secrets: SecretResolver;
  /** Where the runtime keeps state (claw.runtime.yaml data_dir). */
  dataDir: string;
  worker?: WorkerCommand;
  /** claw.runtime.yaml `transports:` and these `--listen` URIs, opened; an unknown scheme is ClawError('usage') before any opens. */
  openListeners(cli: readonly string[]): Promise<Transport[]>;
  /** A client for an agent listening on `uri` (`claw send`), with this runtime's secrets. */
  connect(uri: string, o?: { sender?: string; connectTimeoutMs?: number }): Promise<TransportClient>;
  /** The kernel, its capability modules and the router, serving `transports`. */
  start(o: StartOptions): Runtime;
}

export function composeRuntime(input: ComposeInput): ComposedRuntime {
  const { host, config, manifestFile } = input;
  const redactor = input.redactor ?? host.redactor ?? new Redactor();
  const log =
    input.log ?? createLogger({ write: (s) => host.stderr.write(s), level: (config.log?.level ?? 'info') as LogLevel, redactor, now: host.clock.now });
  // Runtime profile §7: secret_refs resolve from the environment (unless `secrets.env: false`) and the secrets directory.
  const secrets = new SecretResolver(
    {
      env: config.secrets?.env === false ? undefined : host.env,
      dir: config.secrets?.dir ?? host.env.CLAW_SECRETS_DIR,
      readFile: async (p, o) => new TextDecoder().decode(await host.reader.read(p, o)),
    },
    redactor,
    (ref) => log.warn('secret too short to be redacted from logs and tool output (fewer than 4 characters)', { secret_ref: ref }),
  );
  // State lives in data_dir (claw.runtime.yaml), by default .claw-data beside the manifest.
  const dataDir = config.data_dir ?? joinPath(manifestFile ? dirnameOf(manifestFile) : host.cwd, '.claw-data');
  const configDir = input.configFile ? dirnameOf(input.configFile) : undefined;
  const worker = host.self && workerCommand(host.self);
  return {
    host,
    config,
    configFile: input.configFile,
    manifestFile,
    launchManifest: input.manifest,
    log,
    redactor,
    secrets,
    dataDir,
    worker,
    openListeners: (cli) =>
      openTransports(
        listenEntries(cli, config),
        { log, clock: host.clock, baseDir: host.cwd, configDir, dataDir, maxFrameBytes: config.limits?.max_frame_bytes, secrets, agentName: input.manifest?.name, servesA2a: config.a2a?.enabled === true },
        LISTEN_SCHEMES,
      ),
    connect: (uri, o) => connectClient(uri, { baseDir: host.cwd, clock: host.clock, secrets, sender: o?.sender, connectTimeoutMs: o?.connectTimeoutMs }, CLIENT_SCHEMES),
    start: (o) =>
      startRuntime({
        redactor,
        ledgerStore: createFileLedgerStore(dataDir),
        dataDir,
        env: host.env,
        version: host.version,
        worker,
        writeStderr: (text) => host.stderr.write(text),
        config,
        log,
        clock: host.clock,
        reader: host.reader,
        cwd: host.cwd,
        configDir,
        configFile: input.configFile,
        secrets,
        launchManifest: input.manifest,
        transports: o.transports,
        agentLoop: o.agentLoop,
        historyTags: o.historyTags,
        modules: o.modules,
      }),
  };
}
