// The conversation the model sees. With a `conversation` memory store declared (spec §5.6), every turn is
// stored there — the FemtoClaw §5.4 "record message in memory" — and a new session resumes from its most
// recent entries; without one, the conversation lives for the session only.
import type { ChatMessage, History } from './types.ts';

/** The part of a conversation store the loop uses (src/memory/stores/conversation.ts). */
export interface ConversationStoreLike {
  store(entries: { content: string; metadata?: Record<string, unknown> }[]): Promise<string[]>;
  query(q: { type: 'time-range'; top_k?: number }): Promise<{ entries: { content: string; metadata?: Record<string, unknown> }[] }>;
}

/** Messages resumed from the store at start; the provider's max_context_window trims further. */
export const RESUME_MESSAGES = 40;

export class MemoryHistory implements History {
  private readonly list: ChatMessage[] = [];
  constructor(
    private readonly store?: ConversationStoreLike,
    private readonly tags: Record<string, unknown> = {},
  ) {}

  /** Loads the most recent stored turns (chronological). */
  async resume(limit = RESUME_MESSAGES): Promise<number> {
    if (!this.store) return 0;
    const r = await this.store.query({ type: 'time-range', top_k: limit });
    for (const e of r.entries) {
      const role = e.metadata?.role;
      if (role === 'user' || role === 'assistant' || role === 'tool') this.list.push({ role, content: e.content });
    }
    return this.list.length;
  }

  messages(): ChatMessage[] {
    return this.list;
  }

  async append(m: ChatMessage): Promise<void> {
    this.list.push(m);
    await this.store?.store([{ content: m.content, metadata: { ...this.tags, role: m.role } }]);
  }
}
