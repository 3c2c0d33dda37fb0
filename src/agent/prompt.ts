// The system prompt (docs/agent.md; FemtoClaw §4–§6): who the agent is (Identity: personality, locale,
// context files), what it can do (skills' instructions, tools with descriptions and argument
// schemas), and the one output contract — exactly one FemtoClaw JSON object, nothing else.
import type { OutputMode } from '../provider/output-mode.ts';

export interface ToolDescriptor {
  name: string;
  description?: string;
  input_schema?: Record<string, unknown>;
}

export interface SkillDescriptor {
  name: string;
  description: string;
  instruction: string;
}

export interface PromptInputs {
  agentName: string;
  personality?: string;
  locale?: string;
  /** Context file name → its text (already read and bounded). */
  contextFiles?: [string, string][];
  skills: SkillDescriptor[];
  tools: ToolDescriptor[];
}

export const PROTOCOL_INSTRUCTIONS = [
  'Output protocol (strict): answer with exactly one JSON object and nothing else.',
  'To reply to the user: {"message":{"content":"<your reply>"}}',
  'To call a tool: {"tool_call":{"tool":"<tool name>","args":{<arguments matching the tool schema>}}}',
  'No code fences, no text before or after the object, no other fields. Tool names are exact and case-sensitive.',
  'After a tool call you receive {"tool_result":{...}} and answer again with one JSON object.',
].join('\n');

/**
 * Native mode (docs/agent.md "Output modes"): the API carries the tools and their schemas, and separates
 * a call from an answer, so the prompt says only that. Schemas are not repeated here: on a small model's
 * context window every token counts.
 */
export const NATIVE_INSTRUCTIONS = [
  'Answer the user in plain text.',
  'To act, call exactly one tool with the tool-calling interface; its result comes back and you answer again. Never write a tool call as text.',
].join('\n');

export const NATIVE_NO_TOOLS = 'Answer the user in plain text.';

export function buildSystemPrompt(p: PromptInputs, mode: OutputMode = 'prompt'): string {
  const parts: string[] = [`You are ${p.agentName}.`];
  if (p.personality) parts.push(p.personality.trim());
  if (p.locale) parts.push(`Answer in the locale ${p.locale} unless the user writes in another language.`);
  for (const [name, text] of p.contextFiles ?? []) parts.push(`# Context: ${name}\n${text.trim()}`);
  if (p.skills.length > 0) {
    parts.push('# Skills\n' + p.skills.map((s) => `## ${s.name}: ${s.description.trim()}\n${s.instruction.trim()}`).join('\n'));
  }
  if (mode === 'native') {
    if (p.tools.length === 0) parts.push(`# Tools\nNo tools are available.\n\n# ${NATIVE_NO_TOOLS}`);
    else parts.push(`# Tools\n${p.tools.map((t) => `- ${t.name}: ${(t.description ?? '').trim() || '(no description)'}`).join('\n')}\n\n# ${NATIVE_INSTRUCTIONS}`);
    return parts.join('\n\n');
  }
  if (p.tools.length > 0) {
    // In json_schema mode the server also gets the schemas (response_format); the prompt keeps them, as
    // a server may follow the schema only loosely and the model still has to pick the right arguments.
    const lines = p.tools.map((t) => `- ${t.name}: ${(t.description ?? '').trim() || '(no description)'}\n  args schema: ${JSON.stringify(t.input_schema ?? { type: 'object' })}`);
    parts.push('# Tools\n' + lines.join('\n'));
  } else {
    parts.push('# Tools\nNo tools are available: always answer with the message form.');
  }
  parts.push('# ' + PROTOCOL_INSTRUCTIONS);
  return parts.join('\n\n');
}
