// Composition of the tool layer for a running agent: the sandbox runner (src/sandbox), the MCP pool
// with a sandboxed spawner per sandbox, the network guard and the builtins' worker command.
// Host capabilities are probed once, when the first session needs them.
import { resolve } from 'node:path';
import { detectHost, type HostCapabilities, type PrivatePaths } from '../sandbox/host.ts';
import { scrubInitialEnvironment } from '../node/scrub-env.ts';
import { sweepOrphansOnce } from '../sandbox/orphans.ts';
import { runRecords } from '../sandbox/run-records.ts';
import { checkLevel, planIsolation } from '../sandbox/levels.ts';
import { unprotected } from '../sandbox/unprotected.ts';
import { runSandboxed } from '../sandbox/runner.ts';
import { spawnSandboxed } from '../sandbox/spawn.ts';
import { mountPaths, fsMode } from '../sandbox/spec-view.ts';
import { McpPool, createMcpBinder } from '../tools/mcp/backend.ts';
import { mcpHttpAccess } from '../tools/mcp/http-access.ts';
import { sandboxedFetch } from './net-fetch.ts';
import { a2aPeerPort } from './a2a-peers.ts';
import { sandboxOf } from './sandbox-of.ts';
import type { McpProcess, McpSpawn } from '../tools/mcp/client.ts';
import type { ProcessRunner } from '../tools/runner-port.ts';
import type { RegistryDeps } from '../tools/registry.ts';
import { runsInWorker, workerProcessSandbox, type WorkerCommand } from '../tools/builtins/impl.ts';
import type { ToolImpl } from '../tools/types.ts';
import type { SandboxSpec } from '../manifest/schema/index.ts';
import type { ResolvedManifest } from '../manifest/resolved.ts';
import type { RuntimeConfig } from '../config/runtime-config.ts';
import type { Logger } from '../kernel/ports.ts';
import type { SecretResolver } from '../kernel/secrets.ts';

export interface ToolEnvironment {
  registry: RegistryDeps;
  /** A message when this board cannot run `impl` under `sandbox` (spec §5.8), else undefined. */
  isolationProblem(sandbox: SandboxSpec, impl: ToolImpl): string | undefined;
  /** What will enforce what (and every downgrade the configuration allowed), for the log. */
  isolationNotes(sandbox: SandboxSpec, impl: ToolImpl): string[];
  host: HostCapabilities;
}

export interface ToolEnvironmentDeps {
  config: RuntimeConfig;
  log: Logger;
  secrets: SecretResolver;
  /** The runtime's own environment: allowlisted variables for tools are taken from it. */
  env: Record<string, string | undefined>;
  cwd: string;
  version: string;
  worker?: WorkerCommand;
  /** data_dir (tool runs are recorded under sandbox-runs/ there, src/sandbox/run-records.ts) and the runtime
   * configuration file: both hidden from every tool (docs/security.md). */
  dataDir?: string;
  configFile?: string;
}

/**
 * What the isolation check applies to: in-process builtins need no process mechanism; a worker
 * builtin is a process enforcing its own network rules (workerProcessSandbox); all else is `exec`.
 */
function isolationTarget(sandbox: SandboxSpec, impl: ToolImpl): { spec: SandboxSpec; use: 'exec' | 'builtin' } {
  // An MCP server over HTTP is no process of ours: the runtime's requests go through the network guard.
  if (impl.kind === 'mcp' && !impl.touchesOs) return { spec: sandbox, use: 'builtin' };
  if (impl.kind !== 'builtin') return { spec: sandbox, use: 'exec' };
  if (impl.isShell) return { spec: sandbox, use: 'exec' };
  if (impl.touchesOs && runsInWorker(impl as { touchesOs: boolean; isShell?: boolean }, sandbox)) return { spec: workerProcessSandbox(sandbox), use: 'exec' };
  return { spec: sandbox, use: 'builtin' };
}

/** Where a tool starts and relative paths resolve: the first writable mount of a scoped sandbox. */
export function cwdFor(sandbox: SandboxSpec, fallback: string): string {
  if (fsMode(sandbox) === 'scoped') {
    const m = mountPaths(sandbox);
    return (m.find((x) => x.permissions === 'rw') ?? m[0])?.path ?? fallback;
  }
  return fallback;
}

/** The runtime's own files on this host, which no sandbox may show a tool (src/sandbox/bwrap-args.ts). */
function privatePaths(d: ToolEnvironmentDeps): PrivatePaths {
  const secrets = d.config.secrets?.dir ?? d.env.CLAW_SECRETS_DIR;
  const abs = (p: string) => resolve(d.cwd, p);
  return {
    dirs: [secrets, d.dataDir].filter((x): x is string => !!x).map(abs),
    files: d.configFile ? [abs(d.configFile)] : [],
    // The agent's workspace (write-workspace skills) is shared with tools on purpose.
    shared: d.dataDir ? [abs(`${d.dataDir}/workspace`)] : [],
  };
}

export async function createToolEnvironment(d: ToolEnvironmentDeps, manifest: ResolvedManifest): Promise<ToolEnvironment> {
  // Before the first tool child exists: afterwards /proc/<pid>/environ shows no secret (docs/security.md).
  scrubInitialEnvironment();
  // What a runtime killed mid-call left running is killed before this one runs tools (src/sandbox/orphans.ts).
  const records = d.dataDir ? runRecords(`${d.dataDir}/sandbox-runs`) : undefined;
  if (records) {
    const swept = await sweepOrphansOnce(records.root);
    if (swept.runtimes > 0) d.log.warn('sandbox: swept tool processes of a runtime that died', { ...swept });
  }
  const host = { ...(await detectHost(d.env)), private: privatePaths(d) };
  const allowDowngrade = d.config.sandbox?.allow_downgrade;
  const graceMs = d.config.sandbox?.kill_grace_ms;
  const run: ProcessRunner = (req) =>
    runSandboxed({
      bin: req.bin,
      argv: req.argv,
      env: d.env,
      extraEnv: req.env,
      secrets: req.secrets,
      cwd: req.cwd,
      sandbox: req.sandbox,
      host,
      allowDowngrade,
      timeoutMs: req.timeoutMs,
      readOnlyBinds: req.readOnlyBinds,
      stdin: req.stdin,
      signal: req.signal,
      graceMs,
      records,
    });
  // One MCP server process runs under one sandbox: the pool's partition is the tool's sandbox_ref.
  const sandboxOfPartition = (partition: string): SandboxSpec =>
    sandboxOf(manifest, partition.startsWith('sandbox:') ? partition.slice('sandbox:'.length) : undefined);
  const spawnFor =
    (partition: string): McpSpawn =>
    async (bin, argv, _env, cwd): Promise<McpProcess> => {
      const sandbox = sandboxOfPartition(partition);
      const p = await spawnSandboxed({ bin, argv, env: d.env, cwd: cwd ?? cwdFor(sandbox, d.cwd), sandbox, host, allowDowngrade, graceMs, records });
      return {
        stdin: p.stdin,
        stdout: p.stdout,
        stderr: p.stderr,
        pid: p.pid,
        kill: p.kill,
        exited: p.exited.then((s) => ({ code: s.exitCode, signal: s.signal })),
      };
    };
  const pool = new McpPool({
    spawn: spawnFor(''),
    spawnFor,
    // Streamable HTTP servers: the runtime's own requests, under the partition's sandbox network rules.
    http: (target, partition) => mcpHttpAccess(target, sandboxOfPartition(partition), { config: d.config.mcp, resolveSecret: (ref) => d.secrets.resolve(ref) }),
    clientVersion: d.version,
    logger: d.log,
  });
  return {
    host,
    registry: {
      run,
      resolveSecrets: async (refs) => {
        const out: Record<string, string> = {};
        for (const ref of refs) out[ref] = await d.secrets.resolve(ref);
        return out;
      },
      builtins: { run, fetch: sandboxedFetch, cwdFor: (sb) => cwdFor(sb, d.cwd), worker: d.worker,
        mqtt: d.config.mqtt_tools ? (await import('../tools/builtins/mqtt-port.ts')).mqttToolPort(d.config.mqtt_tools, { secrets: d.secrets, baseDir: d.dataDir ?? d.cwd, log: d.log }) : undefined,
        a2a: d.config.a2a?.peers?.length ? a2aPeerPort(d.config.a2a.peers, { secrets: d.secrets }) : undefined },
      mcp: createMcpBinder(pool, { logger: d.log, retryDelaysMs: d.config.mcp?.start_retry_delays_ms }),
    },
    isolationProblem(sandbox, impl) {
      const t = isolationTarget(sandbox, impl);
      const r = checkLevel(t.spec, host, allowDowngrade, t.use);
      return r.ok ? undefined : r.message;
    },
    isolationNotes(sandbox, impl) {
      const t = isolationTarget(sandbox, impl);
      const r = planIsolation(t.spec, host, allowDowngrade, t.use);
      return r.ok ? [...r.plan.notes, unprotected(r.plan, t.spec, host, t.use)] : [];
    },
  };
}
