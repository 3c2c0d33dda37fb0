// Embeddings client for a Provider (hybrid search in `semantic` memory stores, docs/memory.md). OpenAI-compatible
// `POST {endpoint}/embeddings` (OpenAI, Ollama, llama.cpp server, vLLM all speak it): body `{ model, input }`,
// reply `{ data: [{ index, embedding }], usage? }`. The HTTP attempt, timeout, error classification, the attempt
// loop (retries, requests_per_minute window shared with chat, ledger charge) and auth are the chat client's
// (http.ts, attempts.ts, client.ts), not copies.
// - `anthropic-native` has no embeddings API (Anthropic offers none) and `custom` (an offline rules file) has
//   none either: embed() fails with reason 'config' saying so; the memory store then searches by full text.
// - `dimensions` is checked on every vector, not sent: OpenAI accepts it only for text-embedding-3 models and
//   local servers ignore it, so a mismatch is a malformed reply, never a silent mix of vector sizes.
// - Tokens: usage.total_tokens (else prompt_tokens, else the estimate ceil(bytes/3)) is charged to the same token
//   ledger as chat (spec §5.2 tokens_per_day); a provider whose daily quota is spent is refused before sending.
import type { ResolvedPrimitive } from '../manifest/resolved.ts';
import type { ProviderSpec } from '../manifest/schema/index.ts';
import { ProviderEndpoint } from './client.ts';
import { attemptLimits, type ProviderDeps } from './deps.ts';
import { ProviderFailure, malformed } from './failure.ts';
import { postJson, readText, startAttempt } from './http.ts';
import type { MinuteWindow } from './limits.ts';
import { charge, withRetries } from './attempts.ts';
import { estimateText } from './tokens.ts';
import { num } from './completion.ts';

/**
 * Embedding requests fail over to full text quickly: a memory call should not wait minutes on a stalled server.
 * The idle limit is capped at this unless claw.runtime.yaml sets the provider's own `timeout_ms`.
 */
export const EMBEDDINGS_TIMEOUT_MS = 30_000;

export interface EmbeddingsOptions {
  /** The store's `embedding.model`. */
  model: string;
  /** The store's `embedding.dimensions`: every vector must have this length. */
  dimensions: number;
  /** A requests_per_minute window of its own (default: the provider's, shared over `deps` with chat; attempts.ts). */
  window?: MinuteWindow;
}

export interface EmbeddingsClient {
  readonly provider: string;
  /** One vector per text, in order. Throws a ProviderFailure (message names the provider, never a body or secret). */
  embed(texts: string[], signal?: AbortSignal): Promise<number[][]>;
}

/** `{endpoint}/embeddings`; an endpoint already ending in /embeddings is used as is. */
export function embeddingsUrl(endpoint: string): string {
  const base = endpoint.replace(/\/+$/, '');
  return base.endsWith('/embeddings') ? base : `${base}/embeddings`;
}

/** Parse an OpenAI-style embeddings reply into `n` vectors of `dimensions` numbers, in input order. */
export function parseEmbeddings(text: string, n: number, dimensions: number): { vectors: number[][]; tokens?: number } {
  let j: { data?: unknown; usage?: { total_tokens?: unknown; prompt_tokens?: unknown } };
  try {
    j = JSON.parse(text);
  } catch (e) {
    throw malformed('embeddings reply is not JSON', e);
  }
  if (!Array.isArray(j?.data) || j.data.length !== n) throw malformed(`embeddings reply has ${Array.isArray(j?.data) ? j.data.length : 'no'} vectors for ${n} inputs`);
  const vectors: number[][] = new Array(n);
  j.data.forEach((d: { index?: unknown; embedding?: unknown }, i: number) => {
    const at = typeof d?.index === 'number' ? d.index : i;
    const v = d?.embedding;
    if (!Number.isInteger(at) || at < 0 || at >= n || vectors[at]) throw malformed(`embeddings reply: bad or repeated index ${String(d?.index)}`);
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'number' && Number.isFinite(x))) throw malformed(`embeddings reply: data[${i}].embedding is not an array of numbers (base64 is not requested)`);
    if (v.length !== dimensions) throw malformed(`embeddings reply: vector of ${v.length} dimensions, the store declares ${dimensions}`);
    vectors[at] = v;
  });
  const u = j.usage;
  // Counted like a chat answer's usage (completion.ts num): a count no model could report is not charged.
  const tokens = num(u?.total_tokens) ?? num(u?.prompt_tokens);
  return { vectors, tokens };
}

export function createEmbeddingsClient(deps: ProviderDeps, p: ResolvedPrimitive, o: EmbeddingsOptions): EmbeddingsClient {
  const spec = p.spec as ProviderSpec;
  const name = p.name;
  const auth = new ProviderEndpoint(p, deps);
  const unsupported =
    spec.protocol === 'anthropic-native'
      ? `${name}: protocol anthropic-native has no embeddings API (Anthropic offers none); use an openai-compatible provider (OpenAI, Ollama, llama.cpp) for embedding.provider_ref`
      : spec.protocol === 'custom'
        ? `${name}: a custom (rules file) provider has no embeddings API`
        : undefined;

  return {
    provider: name,
    async embed(texts, signal = new AbortController().signal) {
      if (unsupported) throw new ProviderFailure('config', unsupported);
      if (texts.length === 0) return [];
      const estimate = texts.reduce((n, t) => n + estimateText(t), 0);
      const perDay = spec.limits?.tokens_per_day;
      if (perDay !== undefined) {
        const used = await deps.ledger.usedToday(name);
        if (used + estimate > perDay)
          throw new ProviderFailure('quota', `${name}: embeddings (~${estimate} tokens) would exceed the daily quota (${used} of ${perDay} used)`, { detail: { limit: 'tokens_per_day', tokens_per_day: perDay, used, estimate } });
      }
      const perRequest = spec.limits?.tokens_per_request;
      if (perRequest !== undefined && estimate >= perRequest)
        throw new ProviderFailure('quota', `${name}: embeddings input (~${estimate} tokens) reaches tokens_per_request (${perRequest})`, { detail: { limit: 'tokens_per_request', tokens_per_request: perRequest, estimate } });
      const headers = await auth.authHeaders();
      const url = embeddingsUrl(spec.endpoint);
      const body = { model: o.model, input: texts };
      const l = attemptLimits(deps, name);
      const limits = deps.timeouts?.[name]?.timeoutMs !== undefined ? l : { ...l, idleMs: Math.min(l.idleMs, EMBEDDINGS_TIMEOUT_MS) };
      const retryDeps = o.window ? { ...deps, windows: new Map([[name, o.window]]) } : deps;
      return withRetries(retryDeps, { name, spec, signal, operation: 'embeddings' }, async () => {
        const started = deps.clock.monotonic();
        const at = startAttempt(signal, limits, deps.clock);
        const io = { name, caller: signal, attempt: at };
        try {
          const res = await postJson({ ...io, url, headers, body, fetch: deps.fetch ?? fetch, now: () => deps.clock.now() });
          let text = '';
          await readText(res, io, (t) => void (text += t));
          const r = parseEmbeddings(text, texts.length, o.dimensions);
          deps.telemetry?.latency('provider.embeddings', deps.clock.monotonic() - started);
          await charge(deps, name, r.tokens ?? estimate);
          return r.vectors;
        } catch (e) {
          if (e instanceof ProviderFailure && e.reason === 'malformed' && !e.message.startsWith(`${name}: `))
            throw new ProviderFailure('malformed', `${name}: ${e.message}`, { cause: e });
          throw e;
        } finally {
          at.done();
        }
      });
    },
  };
}
