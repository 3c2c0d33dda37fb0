// `limits` of a Provider (spec §5.2), checked before anything is sent:
// - tokens_per_day: refused with -32021 when today's ledger (real usage from responses) has reached
//   it, or when the request's estimated input would; otherwise max_tokens is capped to what remains.
// - max_context_window: history trimmed (tokens.ts) to the window minus an output reserve of
//   min(1024, window/4); max_tokens capped to the room left in the window.
// - tokens_per_request: input + output of one request; refused when the input alone reaches it,
//   else max_tokens capped to the rest.
// - requests_per_minute: a sliding 60 s window per provider, in memory; a request waits for a slot
//   (abortable) rather than failing, because a user would rather wait seconds than get a worse
//   answer; 0 refuses every request with -32021. Retries count as requests.
import type { ChatMessage, ToolDefinition } from '../kernel/ports.ts';
import type { TokenLedger } from '../kernel/ledger.ts';
import type { ProviderSpec } from '../manifest/schema/index.ts';
import { ProviderFailure } from './failure.ts';
import { trimToBudget } from './tokens.ts';

export const OUTPUT_RESERVE_TOKENS = 1024;
/**
 * Ceiling of max_tokens whenever one is sent: a cap derived from a large window (200k − input) would
 * exceed the model's own output limit and be refused with a 400. FemtoClaw answers are short.
 */
export const MAX_OUTPUT_TOKENS = 4096;
export const MINUTE_MS = 60_000;

const quota = (name: string, limit: string, message: string, detail: Record<string, unknown>) =>
  new ProviderFailure('quota', `${name}: ${message}`, { detail: { limit, ...detail } });

export interface Plan {
  messages: ChatMessage[];
  /** Estimated input tokens of what will be sent. */
  estimate: number;
  /** Largest max_tokens the limits allow; undefined when none applies. */
  maxTokens?: number;
  dropped: number;
}

export async function plan(
  name: string,
  limits: ProviderSpec['limits'],
  messages: ChatMessage[],
  tools: ToolDefinition[] | undefined,
  ledger: TokenLedger,
): Promise<Plan> {
  const caps: number[] = [];
  let used = 0;
  const perDay = limits?.tokens_per_day;
  if (perDay !== undefined) {
    used = await ledger.usedToday(name);
    if (used >= perDay) throw quota(name, 'tokens_per_day', `daily token quota reached (${used} of ${perDay})`, { tokens_per_day: perDay, used });
  }
  const window = limits?.max_context_window;
  const budget = window === undefined ? Infinity : window - Math.min(OUTPUT_RESERVE_TOKENS, Math.floor(window / 4));
  const t = trimToBudget(messages, budget, tools);
  if (!t) throw quota(name, 'max_context_window', `system prompt and current turn alone exceed the context window (${window} tokens)`, { max_context_window: window });
  if (window !== undefined) caps.push(window - t.estimate);
  const perRequest = limits?.tokens_per_request;
  if (perRequest !== undefined) {
    if (t.estimate >= perRequest) throw quota(name, 'tokens_per_request', `request input (~${t.estimate} tokens) reaches tokens_per_request (${perRequest})`, { tokens_per_request: perRequest, estimate: t.estimate });
    caps.push(perRequest - t.estimate);
  }
  if (perDay !== undefined) {
    if (used + t.estimate >= perDay) throw quota(name, 'tokens_per_day', `request (~${t.estimate} tokens) would exceed the daily quota (${used} of ${perDay} used)`, { tokens_per_day: perDay, used, estimate: t.estimate });
    caps.push(perDay - used - t.estimate);
  }
  const p: Plan = { messages: t.messages, estimate: t.estimate, dropped: t.dropped };
  if (caps.length) p.maxTokens = Math.min(MAX_OUTPUT_TOKENS, ...caps);
  return p;
}

/** Sliding-window request counter for requests_per_minute. */
export class MinuteWindow {
  private times: number[] = [];
  /** ms until a request may start at `now` (0: now). */
  wait(limit: number, now: number): number {
    while (this.times.length && this.times[0] <= now - MINUTE_MS) this.times.shift();
    return this.times.length < limit ? 0 : this.times[this.times.length - limit] + MINUTE_MS - now;
  }
  take(now: number): void {
    this.times.push(now);
  }
}

export async function acquire(
  name: string,
  w: MinuteWindow,
  limit: number | undefined,
  now: () => number,
  sleep: (ms: number) => Promise<void>,
): Promise<void> {
  if (limit === undefined) return;
  if (limit === 0) throw quota(name, 'requests_per_minute', 'requests_per_minute is 0', { requests_per_minute: 0 });
  for (let d = w.wait(limit, now()); d > 0; d = w.wait(limit, now())) await sleep(d);
  w.take(now());
}
