// One turn of the agent (docs/agent.md; FemtoClaw §10–§12, §16–17): ask the model, validate its output with
// the pure validator, and only then act. A `message` is recorded and returned, never executed or scanned
// for commands. A `tool_call` goes through the same gates as claw.tool.call (schema, autonomy, policy,
// approval, quota, sandbox): one code path, injected as `callTool`. A rejected output executes nothing,
// is audited and reported, and goes back to the model as a correction, a bounded number of times.
import { protocolMessageOf } from './candidate.ts';
import { DEFAULT_LOOP_LIMITS, type ChatMessage, type LoopDeps, type ModelOutput, type ToolOutcome, type ToolStep, type TurnResult } from './types.ts';
import type { Rejection } from '../femtoclaw/verdict.ts';
import { TOOL_NAME } from '../femtoclaw/validate.ts';

/** Said to the user when the model keeps breaking the protocol: fixed text, nothing from the model. */
export const GAVE_UP_REPLY = 'Sorry, I could not produce a valid answer. Please rephrase or try again.';
export const STEP_LIMIT_REPLY = 'I stopped after reaching the limit of tool calls for one message.';

export async function runTurn(userText: string, d: LoopDeps, signal: AbortSignal): Promise<TurnResult> {
  const limits = { ...DEFAULT_LOOP_LIMITS };
  for (const [k, v] of Object.entries(d.limits ?? {})) if (v !== undefined) limits[k as keyof typeof limits] = v;
  const toolCalls: ToolStep[] = [];
  const notices: string[] = [];
  const tokens = { input: 0, output: 0 };
  let rejections = 0;
  let modelCalls = 0;
  let last: Rejection | undefined;
  let mode: TurnResult['mode'];
  let provider: string | undefined;
  const started = d.now();
  const turnId = d.newId();
  await d.history.append({ role: 'user', content: userText });
  // Corrections live only inside this turn: the next turn starts from the clean conversation.
  const scratch: ChatMessage[] = [];

  for (;;) {
    signal.throwIfAborted();
    const messages: ChatMessage[] = [{ role: 'system', content: d.systemPrompt }, ...d.history.messages(), ...scratch];
    modelCalls++;
    const out = await d.complete(messages, signal);
    mode = out.mode;
    provider = out.provider;
    noticesOf(out, notices);
    if (out.usage) {
      tokens.input += out.usage.input_tokens;
      tokens.output += out.usage.output_tokens;
      if (out.provider) d.telemetry.tokenUsage(out.provider, out.usage.input_tokens, out.usage.output_tokens);
    }
    const candidate = protocolMessageOf(out);
    const raw = candidate.text;
    d.telemetry.emit('protocol', 'protocol.received', { provider: out.provider, bytes: raw.length, native_tool_call: out.toolCall !== undefined });
    // FemtoClaw allows one action per message: several native tool calls are ambiguous, not "the first".
    const verdict = (out.toolCallCount ?? 0) > 1 ? severalToolCalls(out.toolCallCount!) : d.validate(raw);
    // §16 received / validated / rejected; §17 protocol messages in the audit log (redacted there); §2.5
    // the provider's own output beside the message built from it.
    d.recordVerdict(raw, verdict, { turn: turnId, provider: out.provider, ...(out.mode ? { mode: out.mode } : {}), ...(candidate.providerOutput !== undefined ? { providerOutput: candidate.providerOutput } : {}) });

    if (!verdict.valid) {
      rejections++;
      last = verdict;
      d.telemetry.emit('errors', 'protocol.rejected', rejectionFields(verdict));
      if (rejections > limits.maxCorrections) return finish(GAVE_UP_REPLY, 'gave_up');
      // The model sees what it wrote (cut, redacted) and then why it was refused: roles alternate, and a
      // small model corrects a mistake it can see far better than one it is only told about.
      scratch.push({ role: 'assistant', content: rejectedTurn(raw, limits.maxRejectedChars, d.redact) }, { role: 'user', content: d.correction(verdict, out.mode) });
      continue;
    }

    d.telemetry.emit('protocol', 'protocol.validated', { form: verdict.form, tool: verdict.form === 'tool_call' ? verdict.tool : undefined });

    if (verdict.form === 'message') {
      // §5.4: accepted, recorded in memory, never executed. A native plain-text answer is kept as the
      // text the model wrote, so the conversation shows it the form it used.
      // Redacted on the way out and into the store: a provider (a gateway, a hostile server) may echo the API key
      // it was sent, and the reply goes to a channel user and the conversation store (runtime profile §7).
      await d.history.append({ role: 'assistant', content: d.redact(candidate.built ? verdict.content : raw) });
      return finish(d.redact(verdict.content), 'message');
    }

    if (toolCalls.length >= limits.maxToolSteps) return finish(STEP_LIMIT_REPLY, 'step_limit');
    const requestId = d.newId();
    d.telemetry.emit('protocol', 'capability.requested', { tool: verdict.tool, request_id: requestId });
    const outcome = await d.callTool(verdict.tool, verdict.args, requestId, signal);
    toolCalls.push({ tool: verdict.tool, args: verdict.args, request_id: requestId, ok: outcome.ok, code: outcome.ok ? undefined : outcome.code });
    // A native call goes back as the API's own call and result (ids matched), so the model keeps using
    // tool calling; its FemtoClaw rendering is the text kept for the store and for non-native providers.
    const nativeId = out.mode === 'native' ? out.toolCall?.id : undefined;
    const said = d.redact(raw);
    await d.history.append(nativeId ? { role: 'assistant', content: said, toolCall: out.toolCall } : { role: 'assistant', content: said });
    // Role `tool` without a call id: providers send it as a user turn (docs/providers.md), the offline
    // rules provider recognises it as a tool result.
    const result = toolResultText(verdict.tool, outcome, limits.maxToolResultChars, d.redact);
    await d.history.append(nativeId ? { role: 'tool', content: result, toolCallId: nativeId } : { role: 'tool', content: result });
    scratch.length = 0;
  }

  function finish(reply: string, outcome: TurnResult['outcome']): TurnResult {
    d.telemetry.latency('agent.turn', d.now() - started);
    const r: TurnResult = { reply, outcome, toolCalls, rejections, modelCalls, tokens, notices, ...(mode ? { mode } : {}), ...(provider ? { provider } : {}) };
    if (outcome === 'gave_up' && last) r.problem = `the model answered ${rejections}× without a valid tool call or message: ${problemText(last)}`;
    return r;
  }
}

/** A rejected output as the assistant turn of the retry: redacted (it may quote a secret from a tool result) and cut. */
function rejectedTurn(raw: string, max: number, redact: (s: string) => string): string {
  if (raw.trim() === '') return '(empty answer)';
  return clip(redact(raw), max);
}

/** What the user is told about the providers of this answer: one line per failed provider, then the notices. */
function noticesOf(out: ModelOutput, into: string[]): void {
  for (const f of out.fallbacks ?? []) {
    const where = f.url ? ` (${f.url})` : '';
    // An HTTP failure by its status and the server's words; any other by its own message (cannot reach…, timeout…).
    const status = f.status !== undefined ? `HTTP ${f.status}` : f.message.replace(`${f.provider}: `, '');
    const said = f.server_message ? `: ${f.server_message}` : '';
    const hint = f.status === 404 && f.url && !/\/v1$/.test(f.url) && !f.server_message?.includes('model') ? ' (an OpenAI-compatible endpoint usually ends in /v1)' : '';
    into.push(`provider ${f.provider}${where} failed: ${status}${said}${hint}; ${out.provider ?? 'the next provider'} answered instead`);
  }
  into.push(...(out.notices ?? []));
}

/** A rejection in words a user can act on: the reason, its field or tool when that helps. */
export function problemText(v: Rejection): string {
  const words = PROBLEM[v.reason] ?? v.reason.replace(/_/g, ' ');
  if (v.reason === 'unknown_tool' && v.tool !== undefined && TOOL_NAME.test(v.tool)) return `${words} "${v.tool}"`;
  if (v.reason === 'args_schema' && v.tool !== undefined) return `${words} of ${v.tool}`;
  return words;
}
const PROBLEM: Partial<Record<Rejection['reason'], string>> = {
  code_fence: 'JSON in a code fence',
  text_around_json: 'text around JSON',
  trailing_data: 'text after the JSON',
  empty: 'an empty answer',
  syntax: 'invalid JSON',
  unterminated_string: 'JSON cut off (unterminated string)',
  several_tool_calls: 'several tool calls at once',
  unknown_tool: 'an unknown tool',
  args_schema: 'arguments that do not match the input schema',
  wrong_type: 'a field of the wrong type',
  no_form: 'neither a message nor a tool call',
  unknown_field: 'an unknown field',
  missing_field: 'a missing field',
  empty_content: 'an empty message',
};

/**
 * How the model sees a tool's outcome: one JSON object in a `tool` turn, sent as a user turn (every
 * provider accepts that, native tool calling or not). Text blocks are joined and cut; errors carry code and message only.
 */
export function toolResultText(tool: string, o: ToolOutcome, max: number, redact: (s: string) => string): string {
  if (!o.ok) return JSON.stringify({ tool_result: { tool, ok: false, error: { code: o.code, message: clip(redact(o.message), max) } } });
  const text = o.result.content.map((c) => (c.type === 'text' && typeof c.text === 'string' ? c.text : JSON.stringify(c))).join('\n');
  return JSON.stringify({ tool_result: { tool, ok: o.result.isError !== true, content: clip(redact(text), max) } });
}

/**
 * What telemetry learns of a rejection: the stable step and reason codes, the form, and the tool name and
 * field path only when they are identifiers. A rejected "tool name" or unknown key can be any text the
 * model wrote (its reasoning, a prompt it echoes), and spec §5.11 keeps model output out of telemetry;
 * the audit log has the whole verdict. `detail` is left out for the same reason (it quotes field names).
 */
export function rejectionFields(v: Rejection): Record<string, unknown> {
  const f: Record<string, unknown> = { step: v.step, reason: v.reason, form: v.form };
  if (v.tool !== undefined && TOOL_NAME.test(v.tool)) f.tool = v.tool;
  if (v.field !== undefined && FIELD_PATH.test(v.field)) f.field = v.field;
  return f;
}
/** A JSON pointer made of identifier-like keys and indexes, e.g. /message/content, /tool_call/id. */
const FIELD_PATH = /^(\/[A-Za-z0-9_.-]{1,64})+$/;

function severalToolCalls(n: number): Rejection {
  return { valid: false, step: 'structure', reason: 'several_tool_calls', detail: `the response held ${n} tool calls; exactly one action is allowed`, form: 'tool_call' };
}

function clip(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max)}…[${s.length - max} more characters]`;
}
