// Token estimate and history trimming for `limits.max_context_window` (spec §5.2).
// Estimate (no tokenizer ships on a $10 board): ceil(UTF-8 bytes / 3) per text, plus 4 tokens of
// framing per message. BPE tokenizers average ~4 bytes per token on English and ~3 per CJK
// character (3 bytes), so this overestimates English by ~25% and is about right for CJK: trimming
// errs on the side of sending less, never more.
import { utf8Length } from '../protocol/utf8.ts';
import type { ChatMessage, ToolDefinition } from '../kernel/ports.ts';

export const MESSAGE_OVERHEAD_TOKENS = 4;

export const utf8Bytes = (s: string): number => utf8Length(s);

export const estimateText = (s: string): number => Math.ceil(utf8Bytes(s) / 3);

export function estimateMessage(m: ChatMessage): number {
  const call = m.toolCall ? estimateText(m.toolCall.name) + estimateText(m.toolCall.arguments) : 0;
  return MESSAGE_OVERHEAD_TOKENS + estimateText(m.content) + call;
}

export function estimateTools(tools: readonly ToolDefinition[] | undefined): number {
  return tools?.length ? estimateText(JSON.stringify(tools)) : 0;
}

export function estimateRequest(messages: readonly ChatMessage[], tools?: readonly ToolDefinition[]): number {
  let n = estimateTools(tools);
  for (const m of messages) n += estimateMessage(m);
  return n;
}

/**
 * Drop the oldest history until the estimate fits `budget` tokens. Never dropped: system messages,
 * and everything from the latest user message on (the current turn and its tool exchanges).
 * Dropped in units: a message with the tool results that directly follow it, so no tool result is
 * left without its call; a unit that would leave the history starting with an assistant turn goes
 * too (APIs want a user turn first). Returns undefined when the protected part alone does not fit.
 */
export function trimToBudget(
  messages: readonly ChatMessage[],
  budget: number,
  tools?: readonly ToolDefinition[],
): { messages: ChatMessage[]; dropped: number; estimate: number } | undefined {
  let estimate = estimateRequest(messages, tools);
  if (estimate <= budget) return { messages: [...messages], dropped: 0, estimate };
  let latestUser = -1;
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i].role === 'user') { latestUser = i; break; }
  const keep = messages.map(() => true);
  // Candidates: non-system messages before the latest user message, oldest first.
  const history: number[] = [];
  for (let i = 0; i < latestUser; i++) if (messages[i].role !== 'system') history.push(i);
  let h = 0;
  const dropUnit = () => {
    do {
      keep[history[h]] = false;
      estimate -= estimateMessage(messages[history[h]]);
      h++;
    } while (h < history.length && messages[history[h]].role === 'tool');
  };
  while (h < history.length && estimate > budget) dropUnit();
  while (h < history.length && messages[history[h]].role !== 'user') dropUnit();
  if (estimate > budget) return undefined;
  const out = messages.filter((_, i) => keep[i]);
  return { messages: out, dropped: messages.length - out.length, estimate };
}
