// The conversation the model sees. With a `conversation` memory store declared (spec §5.6), every turn is
// stored there — the FemtoClaw §5.4 "record message in memory" — and a new session resumes from its most
// recent entries; without one, the conversation lives for the session only.
//
// Whose conversation: every entry is stored with the history's tags (e.g. channel and user), and only
// entries carrying the same tags are resumed, so one user never resumes another's turns from a shared
// store. A store declared `scope: per-identity | per-channel` is partitioned by the store itself and
// needs the partition on every call (`historyScope`); without it the store refuses the call.
import type { ResolvedManifest } from '../manifest/resolved.ts';
import type { ChatMessage, History } from './types.ts';

/** The part of a conversation store the loop uses (src/memory/stores/conversation.ts). */
export interface ConversationStoreLike {
  store(entries: { content: string; metadata?: Record<string, unknown> }[], ctx?: { scope?: string }): Promise<string[]>;
  query(q: { type: 'time-range'; top_k?: number }, ctx?: { scope?: string }): Promise<{ entries: { content: string; metadata?: Record<string, unknown> }[] }>;
}

/** Messages resumed from the store at start; the provider's max_context_window trims further. */
export const RESUME_MESSAGES = 40;
/** Entries read to find them: others' entries in a shared store are skipped, so read more than we keep. */
export const RESUME_SCAN = 400;
/**
 * Messages kept in memory for the model (the store keeps everything its retention allows). Without a
 * provider `max_context_window` nothing else bounds what a long session sends: past the model's window
 * every turn would fail (a 400 is not retried), and the list would grow on a small board forever.
 */
export const MAX_HISTORY_MESSAGES = 200;

export class MemoryHistory implements History {
  private readonly list: ChatMessage[] = [];
  private readonly ctx: { scope?: string } | undefined;
  constructor(
    private readonly store?: ConversationStoreLike,
    private readonly tags: Record<string, unknown> = {},
    /** The store partition (`historyScope`); ignored by a `global` store. */
    scope?: string,
    private readonly maxMessages = MAX_HISTORY_MESSAGES,
  ) {
    this.ctx = scope === undefined ? undefined : { scope };
  }

  /** Loads the most recent stored turns with this history's tags (chronological). */
  async resume(limit = RESUME_MESSAGES): Promise<number> {
    if (!this.store) return 0;
    const r = await this.store.query({ type: 'time-range', top_k: Math.max(limit, RESUME_SCAN) }, this.ctx);
    const mine: ChatMessage[] = [];
    for (const e of r.entries) {
      const role = e.metadata?.role;
      if (role !== 'user' && role !== 'assistant' && role !== 'tool') continue;
      if (!Object.entries(this.tags).every(([k, v]) => e.metadata?.[k] === v)) continue;
      mine.push({ role, content: e.content });
    }
    this.list.push(...mine.slice(-limit));
    this.bound();
    return this.list.length;
  }

  /** Oldest first, and then up to a user message, so no tool result is left without its call (as the provider's trimming does). */
  private bound(): void {
    if (this.list.length <= this.maxMessages) return;
    let cut = this.list.length - this.maxMessages;
    while (cut < this.list.length - 1 && this.list[cut]!.role !== 'user') cut++;
    this.list.splice(0, cut);
  }

  messages(): ChatMessage[] {
    return this.list;
  }

  async append(m: ChatMessage): Promise<void> {
    this.list.push(m);
    this.bound();
    await this.store?.store([{ content: m.content, metadata: { ...this.tags, role: m.role } }], this.ctx);
  }
}

/**
 * The partition a scoped conversation store needs (spec §5.6 `scope`): the Identity's name for
 * `per-identity`, the channel's name for `per-channel` (`claw chat`: the declared `cli` channel's
 * name, else `cli`); undefined for a `global` store or none.
 */
export function historyScope(m: ResolvedManifest, channel: string): string | undefined {
  const stores = (m.memory?.spec.stores ?? []) as { type?: string; scope?: string }[];
  const scope = stores.find((s) => s.type === 'conversation')?.scope;
  if (scope === 'per-identity') return m.identity.name;
  if (scope === 'per-channel') return channel;
  return undefined;
}
