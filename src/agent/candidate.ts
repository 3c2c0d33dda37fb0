// From a provider's answer to the one raw FemtoClaw candidate the validator judges. A native tool call
// (OpenAI tool_calls, Anthropic tool_use) becomes the tool_call form with the arguments text inserted
// exactly as the API sent it — never parsed and re-serialized — so the strict parser sees what the model
// produced (duplicate keys, lone surrogates, depth). The tool name comes before `args`, so nothing inside
// the arguments can change which tool is named: a second "tool" key is a duplicate, extra text is
// trailing data, and both are rejected by the validator (docs/femtoclaw.md).
import type { ModelOutput } from './types.ts';

export function candidateOf(out: ModelOutput): string {
  if (!out.toolCall) return out.text;
  // Some servers send "" for a tool without parameters: that is an empty object, nothing else.
  const args = out.toolCall.arguments.trim() === '' ? '{}' : out.toolCall.arguments;
  return `{"tool_call":{"tool":${JSON.stringify(out.toolCall.name)},"args":${args}}}`;
}
