// `summarize` compaction through a model (docs/memory.md "Embeddings and summaries"): the session's provider chain (the manifest's providers in
// fallback order, the same chain the agent loop uses: its limits, requests_per_minute window and token ledger
// count these calls too) is asked, with a fixed instruction, to summarize one chunk of entries. The store's
// `embedding.provider_ref` plays no part: it names an embeddings endpoint, not a chat model.
// Input is bounded (each entry cut at ENTRY_CHARS, the chunk at INPUT_CHARS) and so is the digest kept
// (OUTPUT_CHARS). Any failure (chain down, quota, empty answer) throws: the store then writes the deterministic
// digest for that chunk and the rest (stores/base.ts), and the compact result says so.
import type { ProviderClient } from '../kernel/ports.ts';
import type { EntryOut, Summarizer } from './stores/types.ts';

export const SUMMARY_INSTRUCTION =
  'You compact the long-term memory of an agent. Summarize the memory entries given by the user into one short digest ' +
  'that keeps every fact, name, number, date, decision and open question; drop greetings and repetition. ' +
  'Answer with the digest text only, no preamble, in the language of the entries.';
/** One entry's content kept for the prompt, characters. */
export const ENTRY_CHARS = 1_000;
/** The whole chunk's prompt text, characters (a digest covers at most 10 entries by default). */
export const INPUT_CHARS = 8_000;
/** The digest kept from the model's answer, characters. */
export const OUTPUT_CHARS = 4_000;

/** The user message: one `[timestamp] content` line per entry, oldest first, bounded. */
export function summaryPrompt(entries: readonly EntryOut[]): string {
  const lines: string[] = [];
  let size = 0;
  for (const e of entries) {
    const text = e.content.replace(/\s+/g, ' ').trim();
    const line = `[${e.timestamp}] ${text.length > ENTRY_CHARS ? `${text.slice(0, ENTRY_CHARS - 1)}…` : text}`;
    if (size + line.length + 1 > INPUT_CHARS) {
      lines.push(`[… ${entries.length - lines.length} more entries not shown]`);
      break;
    }
    lines.push(line);
    size += line.length + 1;
  }
  return `Memory entries (${entries.length}, oldest first):\n${lines.join('\n')}`;
}

export function providerSummarizer(client: ProviderClient, o: { signal: AbortSignal }): Summarizer {
  return async (entries) => {
    const r = await client.complete({
      messages: [
        { role: 'system', content: SUMMARY_INSTRUCTION },
        { role: 'user', content: summaryPrompt(entries) },
      ],
      signal: o.signal,
    });
    const text = r.text.trim();
    if (text === '') throw new Error(`provider "${r.provider}" returned an empty summary`);
    return text.length > OUTPUT_CHARS ? `${text.slice(0, OUTPUT_CHARS - 1)}…` : text;
  };
}
