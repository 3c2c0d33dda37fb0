// From a provider's answer to the one FemtoClaw protocol message the validator judges (seed §4–§6).
//
// A native tool call (OpenAI tool_calls, Anthropic tool_use) becomes the tool_call form with the
// arguments text inserted exactly as the API sent it — never parsed and re-serialized — so the strict
// parser sees what the model produced (duplicate keys, lone surrogates, depth). The tool name comes
// before `args`, so nothing inside the arguments can change which tool is named: a second "tool" key is
// a duplicate, extra text is trailing data, and both are rejected by the validator (docs/femtoclaw.md).
//
// In native mode the API itself separates the forms: text `content` without a tool call is the message
// form, built here as {"message":{"content":…}} — plain text is then an answer, not a violation, and it
// still cannot act (only a native call can). Content that starts like JSON (`{`) or a code fence is
// judged as a protocol message as written, so a model that writes the protocol by hand is held to it.
// In json_schema and prompt mode the text is the candidate, byte for byte.
import type { OutputMode } from '../provider/output-mode.ts';
import type { ModelOutput } from './types.ts';

export interface Candidate {
  /** The protocol message the validator judges (and the audit log records). */
  text: string;
  /** What the provider returned, when it is not `text` itself (native answers), for the audit log. */
  providerOutput?: string;
  /** The message form was built by the runtime from plain native text (`text` is not what the model wrote). */
  built?: boolean;
}

export function candidateOf(out: ModelOutput): string {
  return protocolMessageOf(out).text;
}

export function protocolMessageOf(out: ModelOutput, mode: OutputMode | undefined = out.mode): Candidate {
  if (out.toolCall) {
    // Some servers send "" for a tool without parameters: that is an empty object, nothing else.
    const args = out.toolCall.arguments.trim() === '' ? '{}' : out.toolCall.arguments;
    const text = `{"tool_call":{"tool":${JSON.stringify(out.toolCall.name)},"args":${args}}}`;
    return { text, providerOutput: nativeRecord(out) };
  }
  if (mode !== 'native') return { text: out.text };
  const content = withoutThinking(out.text).trim();
  // Nothing to say (or only thinking, e.g. cut off inside <think>) is the validator's `empty`;
  // JSON-looking content is judged as written.
  if (content === '' || content.startsWith('{') || content.startsWith('`')) return { text: content, providerOutput: out.text };
  return { text: JSON.stringify({ message: { content } }), providerOutput: out.text, built: true };
}

/**
 * Reasoning models (qwen3, deepseek-r1 distills) open with a `<think>…</think>` block before the answer.
 * In native mode that block is the model's scratchpad, not its reply: a leading one is left out of the
 * message (the audit log keeps the provider's whole output). An unclosed block is all thinking and
 * leaves nothing. JSON modes never strip anything: the protocol is the text as written.
 */
export function withoutThinking(text: string): string {
  const m = /^\s*<think>/.exec(text);
  if (!m) return text;
  const end = text.indexOf('</think>', m[0].length);
  return end < 0 ? '' : text.slice(end + '</think>'.length);
}

/** The provider's structured answer, as one JSON text for the audit log (§2.5: intent reconstructable). */
function nativeRecord(out: ModelOutput): string {
  return JSON.stringify({ content: out.text === '' ? null : out.text, tool_calls: [{ name: out.toolCall!.name, arguments: out.toolCall!.arguments }], count: out.toolCallCount ?? 1 });
}
