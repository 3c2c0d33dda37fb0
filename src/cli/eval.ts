// `claw eval <manifest> <scenarios.yaml>`: runs each scenario as a fresh conversation through the agent
// of this manifest — its providers, output modes, validator and gates, exactly as `claw chat` would — and
// reports per scenario and in total: success, model calls, corrections, tokens and latency, as a table
// or JSON (docs/agent.md "Measuring a model"). The scoring is src/agent/eval.ts.
import type { Runtime } from '../runtime/start.ts';
import { joinPath } from '../manifest/reader.ts';
import { openSession } from '../kernel/methods/initialize.ts';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../kernel/version.ts';
import { ClawError, ProtocolError } from '../protocol/errors.ts';
import type { JsonRpcNotification } from '../protocol/jsonrpc.ts';
import type { Transport } from '../kernel/ports.ts';
import { parseYaml } from '../yaml/index.ts';
import { parseArgs } from './args.ts';
import { EVAL_HELP } from './help.ts';
import { prepareRuntime } from './runtime-setup.ts';
import { evalTable, readScenarios, resultOf, totalsOf, type Scenario, type ScenarioResult } from '../agent/eval.ts';
import type { CliEnv } from './env.ts';

const MODES = ['auto', 'native', 'json_schema', 'prompt'];

export async function evalCommand(env: CliEnv, argv: string[]): Promise<number> {
  const args = parseArgs(argv, { values: ['config', 'log-level', 'model', 'endpoint', 'mode'], flags: ['json'] });
  if (args.flags.has('help')) {
    env.stdout.write(EVAL_HELP);
    return 0;
  }
  if (args.positionals.length !== 2) throw new ClawError('usage', 'claw eval needs a manifest and a scenarios file');
  const mode = args.values.get('mode')?.[0];
  if (mode !== undefined && !MODES.includes(mode)) throw new ClawError('usage', `--mode must be one of ${MODES.join(', ')}`);
  const scenarioFile = joinPath(env.cwd, args.positionals[1]!);
  let scenarios: Scenario[];
  {
    let text: string;
    try {
      text = new TextDecoder().decode(await env.reader.read(scenarioFile));
    } catch (e) {
      throw new ClawError('usage', `cannot read ${args.positionals[1]} (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    const y = parseYaml(text);
    if (!y.ok) throw new ClawError('usage', `${args.positionals[1]}:${y.pos.line}:${y.pos.col}: ${y.message}`);
    scenarios = readScenarios(y.value);
  }
  const setup = await prepareRuntime(env, { ...args, positionals: [args.positionals[0]!] }, { defaultLogLevel: 'error' });
  if (typeof setup === 'number') return setup;
  const { log, launchManifest } = setup;
  const m = launchManifest!;
  // Overrides for trying another model or server without editing the manifest: the primary provider only.
  // setup.start reads this manifest and configuration when it starts, so the overrides are set first.
  const primary = m.providers[0];
  if (!primary) throw new ClawError('usage', 'the manifest declares no Provider');
  const model = args.values.get('model')?.[0];
  const endpoint = args.values.get('endpoint')?.[0];
  if (model !== undefined || endpoint !== undefined) {
    primary.spec = { ...primary.spec, ...(model !== undefined ? { model } : {}), ...(endpoint !== undefined ? { endpoint } : {}) };
  }
  if (mode !== undefined) setup.config.providers = { ...setup.config.providers, [primary.name]: { output: mode as 'auto' } };

  let current: Scenario | undefined;
  let runtime!: Runtime;
  // No person is here: an approval is answered by the scenario (`approve: true`), else denied.
  const channel: Transport = {
    name: 'eval',
    start() {},
    notify(n: JsonRpcNotification) {
      if (n.method !== 'claw.tool.approval_requested') return;
      const p = n.params as { request_id: string };
      const approve = current?.approve === true;
      void Promise.resolve(
        runtime.agent.dispatch(approve ? 'claw.tool.approve' : 'claw.tool.deny', { request_id: p.request_id, ...(approve ? {} : { reason: 'denied by claw eval' }) }, { transport: 'eval' }),
      ).catch(() => {});
    },
    closed: new Promise(() => {}),
    close: async () => {},
  };
  runtime = setup.start({ transports: [channel], agentLoop: true, historyTags: { channel: 'eval' } });
  const stop = new AbortController();
  env.onSignal('SIGINT', () => stop.abort(new Error('interrupted')));
  env.onSignal('SIGTERM', () => stop.abort(new Error('terminated')));
  try {
    await openSession(runtime.agent, m, SUPPORTED_PROTOCOL_VERSIONS[0], {}, { name: 'claw-eval', version: env.version });
  } catch (e) {
    log.error('agent could not start', { error: e instanceof Error ? e.message : String(e) });
    await runtime.stop('start failed');
    return 1;
  }
  const agent = runtime.agentLoop!.channelAgent()!;
  const results: ScenarioResult[] = [];
  const run = Date.now().toString(36);
  for (const [i, s] of scenarios.entries()) {
    if (stop.signal.aborted) break;
    current = s;
    const started = env.clock.monotonic();
    try {
      // A conversation of its own per scenario (and per run), so no scenario sees another's history.
      const r = await agent.turn(s.message, stop.signal, { channel: 'eval', user: 'eval', conversation: `eval:${run}:${i}`, tools: true });
      results.push(resultOf(s, r, env.clock.monotonic() - started));
      for (const n of r.notices ?? []) env.stderr.write(`note: ${setup.redactor.redact(n)}\n`);
    } catch (e) {
      if (stop.signal.aborted) break;
      const msg = e instanceof ProtocolError ? `${e.message} (${e.code})` : e instanceof Error ? e.message : String(e);
      results.push({ name: s.name, ok: false, why: setup.redactor.redact(msg), outcome: 'error', modelCalls: 0, corrections: 0, tokensIn: 0, tokensOut: 0, ms: Math.round(env.clock.monotonic() - started) });
    }
  }
  await runtime.stop(stop.signal.aborted ? 'interrupted' : 'eval done');
  const totals = totalsOf(results);
  const spec = primary.spec as { model?: string; endpoint?: string; protocol?: string };
  if (args.flags.has('json')) {
    env.stdout.write(`${JSON.stringify({ provider: primary.name, model: spec.model, protocol: spec.protocol, mode: mode ?? setup.config.providers?.[primary.name]?.output ?? 'auto', scenarios: results, total: totals }, null, 2)}\n`);
  } else {
    env.stdout.write(`claw eval: ${primary.name} (${spec.protocol}, model ${spec.model}), ${results.length} scenarios\n\n${evalTable(results, totals)}`);
  }
  return stop.signal.aborted ? 130 : 0;
}
