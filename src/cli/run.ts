// `claw run [manifest]`: load, validate, then serve CKP over stdio until stdin closes or a signal.
import { createStdioTransport } from '../transports/stdio.ts';
import { parseArgs } from './args.ts';
import { RUN_HELP } from './help.ts';
import type { CliEnv } from './env.ts';
import { ClawError } from '../protocol/errors.ts';
import { prepareRuntime } from './runtime-setup.ts';
import { openSession } from '../kernel/methods/initialize.ts';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../kernel/version.ts';
import { startWhenWritable } from './start-when-writable.ts';

export async function runCommand(env: CliEnv, argv: string[]): Promise<number> {
  const args = parseArgs(argv, { values: ['config', 'log-level', 'listen'], flags: ['start'] });
  if (args.flags.has('help')) {
    env.stdout.write(RUN_HELP);
    return 0;
  }
  if (args.positionals.length > 1) throw new ClawError('usage', 'expected at most one manifest');
  if (args.flags.has('start') && args.positionals.length === 0) throw new ClawError('usage', '--start needs a manifest');
  const setup = await prepareRuntime(env, args);
  if (typeof setup === 'number') return setup;
  const { log, config, launchManifest, manifestFile } = setup;
  // --listen URIs and claw.runtime.yaml `transports:` (docs/transports.md); a bad scheme is a usage error.
  const extra = await setup.openListeners(args.values.get('listen') ?? []);
  const stdio = createStdioTransport({
    input: () => env.stdin,
    output: () => env.stdout,
    maxFrameBytes: config.limits?.max_frame_bytes,
  });
  // The CKP-A2A profile (docs/a2a.md): its routes on the HTTP listeners, claw.task.*, and the agent loop it feeds.
  const a2a = config.a2a?.enabled ? await (await import('../a2a/open.ts')).openA2a({ config, log, listeners: extra, dataDir: setup.dataDir, version: env.version, clock: env.clock, getAgent: () => runtime.agentLoop?.channelAgent(), getDatabase: () => runtime.memoryDatabase(),
    approvals: { decide: (request_id, decision, reason) => runtime.agent.dispatch(decision === 'approved' ? 'claw.tool.approve' : 'claw.tool.deny', { request_id, ...(reason === undefined ? {} : { reason }) }, { transport: 'a2a' }), settled: (id) => runtime.approvalSettled(id) } }) : undefined;
  const runtime = setup.start({ transports: [stdio, ...extra, ...(a2a ? [a2a.notifications] : [])], ...(a2a ? { modules: [a2a], agentLoop: true } : {}) });
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
  log.info('runtime started', { version: env.version, manifest: manifestFile, config: setup.configFile, agent: launchManifest?.name });
  // --start: a daemon whose work arrives on queue channels or peers has no operator to send claw.initialize;
  // the session starts now with the launch manifest, as an initialize without capabilities would (docs/channels.md).
  if (args.flags.has('start')) {
    const start = () => openSession(runtime.agent, launchManifest!, SUPPORTED_PROTOCOL_VERSIONS[0], {}, { name: 'claw-run --start', version: env.version });
    const waiting = () => ['INIT', 'ERROR'].includes(runtime.agent.lifecycle.state);
    const outcome = await startWhenWritable(start, stopped, log, env.clock, waiting);
    if (outcome !== 'started') {
      await runtime.stop(outcome.stopped ?? 'start failed');
      return outcome.stopped?.startsWith('SIG') ? 0 : 1;
    }
  }
  const reason = await stopped;
  await runtime.stop(reason);
  log.info('runtime exiting', { reason });
  return 0;
}
