// What the model is told after a rejected output ("fed back to the model as a correction"). Bounded,
// and it does not quote the rejected output: the agent loop puts that output (cut and redacted) in the
// assistant turn just before this message, where the model sees it as its own. The correction holds
// only the step, the reason, fixed explanations, field names (clipped, redacted) and the tool list.
import type { Rejection, RejectReason } from './verdict.ts';

export interface CorrectionOptions {
  /** Registered tool names to list (bounded to `maxTools`). */
  tools?: readonly string[];
  /** Applied to every text that came from the model (field names, tool name, argument paths). */
  redact?: (s: string) => string;
  /** Ceiling on the whole message, in characters. */
  maxChars?: number;
  maxTools?: number;
  /** How a valid answer looks in the mode the model answered in (default: the JSON shapes). */
  shape?: string;
}

export const DEFAULT_CORRECTION_MAX_CHARS = 1200;

const WHY: Partial<Record<RejectReason, string>> = {
  code_fence: 'it was wrapped in a code fence',
  text_around_json: 'it had text before the JSON',
  trailing_data: 'it had data after the JSON object',
  empty: 'it was empty',
  too_large: 'it was too large',
  too_deep: 'it nested too deeply',
  duplicate_key: 'an object repeated a key',
  bom: 'it began with a byte-order mark',
  invalid_utf8: 'it was not valid UTF-8',
  lone_surrogate: 'a string held an unpaired surrogate',
  not_object: 'it was not a JSON object',
  no_form: 'it had neither "message" nor "tool_call"',
  both_forms: 'it had both "message" and "tool_call"',
  several_tool_calls: 'it held several tool calls; call exactly one tool per answer',
  empty_content: 'the message content was empty',
  invalid_tool_name: 'the tool name is not a valid tool identifier',
};

/** Native tool calling: the API separates the forms, so the model is told to use it, not to write JSON. */
export const NATIVE_SHAPE = 'Answer in plain text, or call exactly one tool with the tool-calling interface, with arguments that match its schema.';

export const SHAPE = 'Answer with exactly one JSON object and nothing else (no code fences, no text before or after): {"message":{"content":"..."}} to reply, or {"tool_call":{"tool":"<name>","args":{...}}} to call a tool.';

export function correctionFor(r: Rejection, o: CorrectionOptions = {}): string {
  const redact = o.redact ?? ((s: string) => s);
  const clip = (s: string, n = 64) => redact(s.length > n ? `${s.slice(0, n)}…` : s);
  let why = WHY[r.reason] ?? 'it was not valid JSON';
  if (r.reason === 'unknown_field' || r.reason === 'missing_field' || r.reason === 'wrong_type' || r.reason === 'form_not_object') {
    const verb = { unknown_field: 'is not allowed', missing_field: 'is missing', wrong_type: 'has the wrong type', form_not_object: 'must be an object' }[r.reason];
    why = `the field ${clip(r.field ?? '')} ${verb}`;
  } else if (r.reason === 'unknown_tool') {
    why = `there is no tool named "${clip(r.tool ?? '')}" (names are exact and case-sensitive)`;
  } else if (r.reason === 'args_schema') {
    const list = (r.issues ?? []).slice(0, 4).map((i) => `${clip(i.path || '/', 48)}: ${clip(i.message, 120)}`);
    why = `its args do not match the input schema of "${clip(r.tool ?? '')}"${list.length > 0 ? ` (${list.join('; ')})` : ''}`;
  }
  const maxTools = o.maxTools ?? 20;
  const names = (o.tools ?? []).slice(0, maxTools);
  const toolLine = names.length > 0 ? ` Available tools: ${names.join(', ')}${(o.tools?.length ?? 0) > maxTools ? ', …' : ''}.` : '';
  const text = `Your previous output was rejected (${r.step}: ${r.reason}): ${why}. ${o.shape ?? SHAPE}${toolLine}`;
  const max = o.maxChars ?? DEFAULT_CORRECTION_MAX_CHARS;
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
