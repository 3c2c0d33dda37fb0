// One turn of the agent (issue 6; FemtoClaw §10–§12, §16–17): ask the model, validate its output with
// the pure validator, and only then act. A `message` is recorded and returned, never executed or scanned
// for commands. A `tool_call` goes through the same gates as claw.tool.call (schema, autonomy, policy,
// approval, quota, sandbox): one code path, injected as `callTool`. A rejected output executes nothing,
// is audited and reported, and goes back to the model as a correction, a bounded number of times.
import { candidateOf } from './candidate.ts';
import { DEFAULT_LOOP_LIMITS, type ChatMessage, type LoopDeps, type ToolOutcome, type ToolStep, type TurnResult } from './types.ts';
import type { Rejection } from '../femtoclaw/verdict.ts';
import { TOOL_NAME } from '../femtoclaw/validate.ts';

/** Said to the user when the model keeps breaking the protocol: fixed text, nothing from the model. */
export const GAVE_UP_REPLY = 'Sorry, I could not produce a valid answer. Please rephrase or try again.';
export const STEP_LIMIT_REPLY = 'I stopped after reaching the limit of tool calls for one message.';

export async function runTurn(userText: string, d: LoopDeps, signal: AbortSignal): Promise<TurnResult> {
  const limits = { ...DEFAULT_LOOP_LIMITS };
  for (const [k, v] of Object.entries(d.limits ?? {})) if (v !== undefined) limits[k as keyof typeof limits] = v;
  const toolCalls: ToolStep[] = [];
  let rejections = 0;
  const started = d.now();
  const turnId = d.newId();
  await d.history.append({ role: 'user', content: userText });
  // Corrections live only inside this turn: the next turn starts from the clean conversation.
  const scratch: ChatMessage[] = [];

  for (;;) {
    signal.throwIfAborted();
    const messages: ChatMessage[] = [{ role: 'system', content: d.systemPrompt }, ...d.history.messages(), ...scratch];
    const out = await d.complete(messages, signal);
    if (out.usage && out.provider) d.telemetry.tokenUsage(out.provider, out.usage.input_tokens, out.usage.output_tokens);
    const raw = candidateOf(out);
    d.telemetry.emit('protocol', 'protocol.received', { provider: out.provider, bytes: raw.length, native_tool_call: out.toolCall !== undefined });
    // FemtoClaw allows one action per message: several native tool calls are ambiguous, not "the first".
    const verdict = (out.toolCallCount ?? 0) > 1 ? severalToolCalls(out.toolCallCount!) : d.validate(raw);
    // §16 received / validated / rejected; §17 protocol messages in the audit log (redacted there).
    d.recordVerdict(raw, verdict, { turn: turnId, provider: out.provider });

    if (!verdict.valid) {
      rejections++;
      d.telemetry.emit('errors', 'protocol.rejected', rejectionFields(verdict));
      if (rejections > limits.maxCorrections) return finish(GAVE_UP_REPLY, 'gave_up');
      scratch.push({ role: 'user', content: d.correction(verdict) });
      continue;
    }

    d.telemetry.emit('protocol', 'protocol.validated', { form: verdict.form, tool: verdict.form === 'tool_call' ? verdict.tool : undefined });

    if (verdict.form === 'message') {
      // §5.4: accepted, recorded in memory, never executed.
      await d.history.append({ role: 'assistant', content: raw });
      return finish(verdict.content, 'message');
    }

    if (toolCalls.length >= limits.maxToolSteps) return finish(STEP_LIMIT_REPLY, 'step_limit');
    const requestId = d.newId();
    d.telemetry.emit('protocol', 'capability.requested', { tool: verdict.tool, request_id: requestId });
    const outcome = await d.callTool(verdict.tool, verdict.args, requestId, signal);
    toolCalls.push({ tool: verdict.tool, request_id: requestId, ok: outcome.ok, code: outcome.ok ? undefined : outcome.code });
    await d.history.append({ role: 'assistant', content: raw });
    // Role `tool` without a call id: providers send it as a user turn (docs/providers.md), the offline
    // rules provider recognises it as a tool result.
    await d.history.append({ role: 'tool', content: toolResultText(verdict.tool, outcome, limits.maxToolResultChars, d.redact) });
    scratch.length = 0;
  }

  function finish(reply: string, outcome: TurnResult['outcome']): TurnResult {
    d.telemetry.latency('agent.turn', d.now() - started);
    return { reply, outcome, toolCalls, rejections };
  }
}

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
