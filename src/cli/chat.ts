// `claw chat <manifest>`: the implicit CLI channel (runtime profile §3). The agent runs in this process:
// each input line is one user message through the FemtoClaw agent loop (src/agent), each reply one
// output. On a terminal it prompts; piped, it is line-oriented: stdout carries only replies, one per
// message (docs/agent.md "claw chat"). Approvals are asked here: the next input line answers (y/yes approves).
import type { Runtime } from '../runtime/start.ts';
import { joinPath } from '../manifest/reader.ts';
import { openSession } from '../kernel/methods/initialize.ts';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../kernel/version.ts';
import { ClawError, ProtocolError } from '../protocol/errors.ts';
import type { JsonRpcNotification } from '../protocol/jsonrpc.ts';
import type { Transport } from '../kernel/ports.ts';
import { parseArgs } from './args.ts';
import { CHAT_HELP } from './help.ts';
import { prepareRuntime } from './runtime-setup.ts';
import { LineInput } from './line-input.ts';
import { StreamView, thinking, type Progress } from './chat-display.ts';
import { watchTurn } from '../agent/stream.ts';
import { cliChannelOf, cliGate } from '../channels/cli-user.ts';
import type { ChannelSpec } from '../channels/types.ts';
import type { CliEnv } from './env.ts';
import { timerDelay } from '../protocol/delay.ts';
import { eitherSignal } from '../kernel/either-signal.ts';

const QUIT = new Set(['/quit', '/exit']);

export async function chatCommand(env: CliEnv, argv: string[]): Promise<number> {
  const args = parseArgs(argv, { values: ['config', 'log-level', 'user'] });
  if (args.flags.has('help')) {
    env.stdout.write(CHAT_HELP);
    return 0;
  }
  if (args.positionals.length !== 1) throw new ClawError('usage', 'claw chat needs exactly one manifest');
  // Chat talks to a person: routine log lines (a provider falling back each turn) would drown the
  // conversation, so only errors are logged unless --log-level or the configuration says otherwise.
  const setup = await prepareRuntime(env, args, { defaultLogLevel: 'error' });
  if (typeof setup === 'number') return setup;
  const { log, launchManifest } = setup;
  const interactive = env.interactive === true;
  const user = args.values.get('user')?.[0] ?? env.env.USER ?? env.env.LOGNAME ?? 'local';
  const input = new LineInput(env.stdin);
  const say = (text: string) => env.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  const aside = (text: string) => (interactive ? say(text) : env.stderr.write(`${text}\n`));

  // Approval requests reach every transport (claw.tool.approval_requested); this one asks the user.
  let runtime!: Runtime;
  const channel: Transport = {
    name: 'cli',
    start() {},
    notify(n: JsonRpcNotification) {
      if (n.method === 'claw.tool.approval_requested') void askApproval(n.params as ApprovalRequest);
    },
    closed: new Promise(() => {}),
    close: async () => {},
  };
  // Questions still waiting for a line. One whose approval was settled otherwise (it expired, its turn
  // ended) is withdrawn, so it cannot swallow the user's next message.
  const questions = new Set<AbortController>();
  const roleBased = (cliChannelOf(launchManifest!)?.spec as ChannelSpec | undefined)?.access_control?.mode === 'role-based';
  let mayApprove = !roleBased;
  // On a terminal: the progress line of the turn in flight (stopped before anything else is written).
  let progress: Progress | undefined;
  const askApproval = async (p: ApprovalRequest) => {
    progress?.stop();
    if (!mayApprove) {
      aside(`approval needed for tool ${p.tool}: denied, ${user} may not approve on this channel (role-based access: admin only)`);
      await Promise.resolve(runtime.agent.dispatch('claw.tool.deny', { request_id: p.request_id, reason: `${user} may not approve on this channel` }, { transport: 'cli' })).catch(() => {});
      return;
    }
    const q = new AbortController();
    questions.add(q);
    const timer = typeof p.timeout_seconds === 'number' && p.timeout_seconds > 0 ? setTimeout(() => q.abort(), timerDelay(p.timeout_seconds * 1000)) : undefined;
    aside(displayReply(`approval needed: tool ${p.tool} ${JSON.stringify(p.arguments ?? {})}${p.reason ? ` (${p.reason})` : ''} — approve? [y/N]`, interactive));
    const line = await input.next(q.signal);
    clearTimeout(timer);
    questions.delete(q);
    if (q.signal.aborted) {
      aside(`approval for tool ${p.tool} is no longer open`);
      return;
    }
    const answer = line?.trim().toLowerCase();
    const approve = answer === 'y' || answer === 'yes';
    await Promise.resolve(
      runtime.agent.dispatch(approve ? 'claw.tool.approve' : 'claw.tool.deny', { request_id: p.request_id, ...(approve ? {} : { reason: `denied on the CLI by ${user}` }) }, { transport: 'cli' }),
    ).catch((e) => log.warn('approval answer failed', { error: String(e) }));
  };

  runtime = setup.start({ transports: [channel], agentLoop: true, historyTags: { channel: 'cli', user } });
  let stopReason = 'end of input';
  let lastFailed = false;
  const auditPath = joinPath(setup.dataDir, 'audit/audit.jsonl');
  // A signal ends the chat now: the turn in progress is aborted (a model that does not answer could
  // otherwise hold Ctrl-C for minutes of timeouts, retries and fallbacks) and no further line is read.
  let turnAbort: AbortController | undefined;
  const interrupt = (reason: string) => {
    stopReason = reason;
    turnAbort?.abort(new Error(`interrupted by ${reason}`));
    env.stdin.destroy?.();
  };
  // On a terminal, Ctrl-C cancels the turn in progress and the chat goes on; Ctrl-C with no turn running
  // (or again while the cancel unwinds) leaves. Piped, SIGINT ends the chat at once: a script means stop.
  let cancelled: AbortController | undefined;
  env.onSignal('SIGINT', () => {
    if (interactive && turnAbort && cancelled !== turnAbort) {
      cancelled = turnAbort;
      turnAbort.abort(new Error('cancelled by Ctrl-C'));
      return;
    }
    interrupt('SIGINT');
  });
  env.onSignal('SIGTERM', () => interrupt('SIGTERM'));
  try {
    await openSession(runtime.agent, launchManifest!, SUPPORTED_PROTOCOL_VERSIONS[0], {}, { name: 'claw-chat', version: env.version });
  } catch (e) {
    log.error('agent could not start', { error: e instanceof Error ? e.message : String(e) });
    await runtime.stop('start failed');
    return 1;
  }
  const agent = runtime.agentLoop!.channelAgent()!;
  // A declared cli Channel's access_control applies to the local user (docs/channels.md "claw chat").
  const gate = cliGate(launchManifest!, { dataDir: setup.dataDir, clock: env.clock });
  const signal = runtime.agent.session!.abort.signal;
  if (interactive) say(`${launchManifest!.identity.name} is listening. /quit to leave.`);
  // Tools need Level 2, which needs a declared Channel (spec §11; the implicit CLI channel does not
  // count): without one the agent has no tools and its prompt says so. Said once, not left to guess.
  if (launchManifest!.tools.length > 0 && runtime.agent.session!.level < 2) {
    aside(`note: the manifest declares tools but no Channel, so this agent runs at Level 1 without tools (spec §11); declare a cli channel to use them.`);
  }

  for (;;) {
    if (interactive) env.stdout.write('> ');
    const line = await input.next();
    if (line === undefined || QUIT.has(line.trim())) break;
    if (line.trim() === '') continue;
    if (stopReason !== 'end of input') break;
    const verdict = gate?.check(user, line);
    if (verdict && !verdict.allow) {
      say(displayReply(`denied: ${verdict.message}`, interactive));
      continue;
    }
    // Under role-based access only an admin answers approvals here (src/channels/access.ts roles).
    if (verdict && roleBased) mayApprove = verdict.mayApprove;
    turnAbort = new AbortController();
    const turnSignal = eitherSignal(signal, turnAbort.signal);
    const view = interactive ? new StreamView((t) => env.stdout.write(t), (t) => displayReply(t, true), () => progress?.stop()) : undefined;
    const unwatch = view ? watchTurn(turnSignal.signal, view.onDelta) : undefined;
    if (interactive) progress = thinking((t) => env.stderr.write(t), { setInterval, clearInterval, now: () => env.clock.monotonic() });
    try {
      const r = await agent.turn(line, turnSignal.signal, { channel: 'cli', user, conversation: `cli:${user}`, tools: verdict?.tools ?? true });
      progress?.stop();
      const reply = displayReply(r.outcome === 'gave_up' && r.problem ? gaveUpLine(r.problem, auditPath) : r.reply, interactive);
      const streamed = view ? !view.finish(r.reply) : false;
      // A provider that failed before a fallback answered, a mode the server refused: one line each, so
      // "I am offline" from the fallback never hides why the model did not answer.
      for (const n of r.notices ?? []) aside(displayReply(`note: ${setup.redactor.redact(n)}`, interactive));
      lastFailed = r.outcome === 'gave_up';
      if (!streamed) say(reply);
    } catch (e) {
      progress?.stop();
      view?.finish('');
      if (cancelled === turnAbort && !signal.aborted && stopReason === 'end of input') {
        say('(cancelled — Ctrl-C again to leave)');
        continue;
      }
      if (turnSignal.signal.aborted) break;
      lastFailed = true;
      // A provider chain that cannot answer (-32020/-32021) is said, and the chat goes on.
      const msg = e instanceof ProtocolError ? `${e.message}${providerDetail(e)} (${e.code})` : e instanceof Error ? e.message : String(e);
      log.error('turn failed', { error: msg });
      say(displayReply(`error: ${setup.redactor.redact(msg)}`, interactive));
    } finally {
      progress?.stop();
      progress = undefined;
      unwatch?.();
      turnSignal.dispose();
      turnAbort = undefined;
      for (const q of questions) q.abort();
    }
  }
  await runtime.stop(stopReason);
  // Piped, a script learns that its last message got no answer (docs/agent.md "claw chat").
  return !interactive && lastFailed ? 1 : 0;
}

/** The give-up reply on this channel: why, in words, and where the detail is (the audit log's protocol.rejected records). */
export function gaveUpLine(problem: string, auditPath: string): string {
  return `Sorry, I could not produce a valid answer — ${problem}. Details: protocol.rejected records in ${auditPath}`;
}

/** The servers' own words for a chain that failed entirely (e.g. Ollama's "model not found, try pulling it first"). */
function providerDetail(e: ProtocolError): string {
  const list = (e.data as { providers?: { provider: string; server_message?: string; url?: string }[] } | undefined)?.providers ?? [];
  const said = list.filter((p) => p.server_message).map((p) => `${p.provider}${p.url ? ` at ${p.url}` : ''} said "${p.server_message}"`);
  return said.length > 0 ? ` — ${said.join('; ')}` : '';
}

/**
 * A reply as this channel shows it. The text comes from the model, so it is untrusted: C0/C1 control
 * characters other than tab (ESC sequences can rewrite or hide what a terminal shows) become U+FFFD.
 * Piped, stdout carries exactly one line per message, so a line break inside the reply (LF, CR, CRLF,
 * U+2028, U+2029) is written as the two characters `\n`; on a terminal, line breaks are kept as LF
 * (a lone CR would overwrite the line it ends). Backslashes are left as they are (docs/agent.md).
 */
export function displayReply(text: string, interactive: boolean): string {
  const lines = text.split(/\r\n|[\r\n\u2028\u2029]/);
  // eslint-disable-next-line no-control-regex
  const clean = lines.map((l) => l.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '\ufffd'));
  return clean.join(interactive ? '\n' : '\\n');
}


interface ApprovalRequest {
  request_id: string;
  tool: string;
  arguments?: unknown;
  reason?: string;
  timeout_seconds?: number;
}
