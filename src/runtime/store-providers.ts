// Which model each memory store talks to, built at STARTING by ./memory-module.ts and imported
// there only when a store needs one (a `semantic` store with `embedding`, or `compaction.strategy: summarize`),
// so an agent whose memory needs no model never loads provider code.
// - embedder: `embedding.provider_ref` resolved in the manifest, its embeddings endpoint (provider/embeddings.ts),
//   `embedding.model`, `embedding.dimensions`. When it fails the error says why; the semantic store then searches
//   by full text (and stores entries without vectors), the query result's metadata carrying the reason. After a
//   failure the provider is not asked again for COOLDOWN_MS (each memory call would otherwise wait out the
//   retries of a dead endpoint); the same reason is reported meanwhile.
// - summarizer: the session's provider chain (src/memory/summarizer-provider.ts), never the embedding provider.
// Here, in the composition layer, because it joins two adapters: memory does not import provider code.
import type { ProviderClient } from '../kernel/ports.ts';
import type { Logger } from '../kernel/ports.ts';
import type { ResolvedManifest } from '../manifest/resolved.ts';
import { resolveRef } from '../manifest/refs.ts';
import { ClawError } from '../protocol/errors.ts';
import type { ProviderDeps } from '../provider/deps.ts';
import { createEmbeddingsClient, type EmbeddingsClient } from '../provider/embeddings.ts';
import { providerSummarizer } from '../memory/summarizer-provider.ts';
import type { Embedder, StoreDeps, StoreSpec } from '../memory/stores/types.ts';

export const COOLDOWN_MS = 30_000;

export interface StoreProviderOptions {
  manifest: ResolvedManifest;
  /** The session's provider deps (one token ledger shared with the chat chain). */
  deps: ProviderDeps;
  /** The session's provider chain. */
  chat: () => ProviderClient;
  log: Logger;
  /** The session's abort signal: a stopping session cancels its model calls. */
  signal: AbortSignal;
  /** Monotonic ms, for the cooldown. */
  monotonic: () => number;
}

/** The embedder / summarizer for each store that needs one. */
export function storeProviders(o: StoreProviderOptions): (spec: StoreSpec) => Pick<StoreDeps, 'embedder' | 'summarizer'> {
  let summarizer: StoreDeps['summarizer'];
  const summarizerOf = () => (summarizer ??= o.manifest.providers.length > 0 ? providerSummarizer(o.chat(), { signal: o.signal }) : undefined);
  return (spec) => {
    const out: Pick<StoreDeps, 'embedder' | 'summarizer' | 'monotonic'> = {};
    if (spec.type === 'semantic' && spec.embedding && spec.search?.strategy !== 'fts-only') {
      out.embedder = embedderFor(spec, o);
      out.monotonic = o.monotonic;
    }
    if (spec.compaction?.strategy === 'summarize') out.summarizer = summarizerOf();
    return out;
  };
}

/** requests_per_minute: one window per provider, shared with chat through `o.deps` (provider/attempts.ts). */
function embedderFor(spec: StoreSpec, o: StoreProviderOptions): Embedder {
  const e = spec.embedding!;
  const ref = e.provider_ref;
  const r = resolveRef(o.manifest, 'Provider', ref);
  const client: EmbeddingsClient | undefined = r.ok ? createEmbeddingsClient(o.deps, r.primitive, { model: e.model, dimensions: e.dimensions }) : undefined;
  let down: { reason: string; until: number } | undefined;
  const unavailable = (why: string) => new ClawError('memory.embedder_unavailable', `embedding provider "${ref}" did not answer (${why}); full-text search only`);
  return async (texts) => {
    if (!r.ok) throw unavailable(r.reason);
    if (down && o.monotonic() < down.until) throw unavailable(down.reason);
    try {
      const v = await client!.embed(texts, o.signal);
      if (down) o.log.info('memory embedding provider answers again', { store: spec.name, provider: ref });
      down = undefined;
      return v;
    } catch (err) {
      if (o.signal.aborted) throw err;
      const reason = (err as Error)?.message ?? String(err);
      // Logged on each real attempt that fails: at most once per cooldown, not once per memory call.
      o.log.warn('memory embedding provider unavailable: full-text search only', { store: spec.name, provider: ref, error: reason, retry_after_ms: COOLDOWN_MS });
      down = { reason, until: o.monotonic() + COOLDOWN_MS };
      throw unavailable(reason);
    }
  };
}
