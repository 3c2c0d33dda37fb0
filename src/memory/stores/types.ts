// The memory stores' richer API (a superset of kernel/ports.ts `MemoryStore`): request ids for idempotent
// store, a scope value for key-value stores, query results that say which search ran, compaction options.
import type * as v from 'valibot';
import { ClawError, ErrorCode } from '../../protocol/errors.ts';
import type { memorySpec03 } from '../../manifest/schema/memory.ts';
import type { SqliteDatabase } from '../sqlite/types.ts';

/** One `spec.stores[]` entry of a Memory manifest (0.2.0 entries are a subset). */
export type StoreSpec = v.InferOutput<typeof memorySpec03>['stores'][number];
export type StoreKind = 'conversation' | 'key-value' | 'semantic' | 'checkpoint' | 'workspace';

export interface EntryIn {
  /** Objects are stored as their JSON text (spec: "string or object"). */
  content: string | Record<string, unknown>;
  metadata?: Record<string, unknown>;
  /** Required by key-value stores; kept (not indexed as unique) by the others. */
  key?: string;
  /** ISO 8601; default: the store's clock. Normalised with `Date#toISOString()`. */
  timestamp?: string;
}

export interface EntryOut {
  id: string;
  content: string;
  /** Semantic queries only: relevance in [0, 1], higher is better (see ranking.ts). */
  score?: number;
  timestamp: string;
  key?: string;
  metadata?: Record<string, unknown>;
}

export interface StoreContext {
  /** `context.request_id`: a repeated id returns the ids of the first call and writes nothing. */
  requestId?: string;
  /** Key-value stores with `scope: per-identity | per-channel`: the identity or channel name. */
  scope?: string;
}

export interface Query {
  type: string;
  text?: string;
  key?: string;
  /** Spec §9.3.4 shape; `from`/`to` at top level (the port's shape) are accepted too. Either bound may be open. */
  time_range?: { from?: string; to?: string };
  from?: string;
  to?: string;
  top_k?: number;
}

export type SearchMode = 'key' | 'time-range' | 'fts' | 'hybrid' | 'vector';

export interface QueryResult {
  entries: EntryOut[];
  /** Which search produced the entries (semantic: 'fts' unless an embedder took part). */
  search: SearchMode;
  /** Semantic stores: the full-text engine used. */
  fts?: 'fts5' | 'fts4' | 'js';
  /** Semantic stores with an embedder: why the query fell back to full text (the embedder failed). */
  fallback?: string;
}

export type CompactionStrategy = 'truncate' | 'sliding-window' | 'summarize';

export interface CompactOptions {
  /** Default: `spec.compaction.strategy`, else 'truncate'. */
  strategy?: CompactionStrategy;
  /** Entries kept verbatim (the newest). Default: half the current count, rounded up. */
  keep?: number;
  /** sliding-window: keep entries newer than this duration ("90d", "12h") before the newest one (or `now`). Default `spec.retention.max_age`. */
  window?: string;
  /** summarize: entries merged into one digest (default 10). */
  digestSize?: number;
}

export interface CompactResult {
  entries_before: number;
  entries_after: number;
  strategy: CompactionStrategy;
  /** summarize: 'summarizer' when the injected one made every digest, else 'fallback'. */
  summarizer?: 'summarizer' | 'fallback';
  /** summarize: why the injected summarizer's digests were replaced by the fallback (its first error). */
  summarizer_error?: string;
}

/** Text embedder (e.g. a Provider's embeddings endpoint). One vector per text, all of the same length. */
export type Embedder = (texts: string[]) => Promise<number[][]>;
/** Summarizer for `summarize` compaction: one digest text for a chunk of entries, oldest first. */
export type Summarizer = (entries: EntryOut[]) => Promise<string>;

export interface StoreDeps {
  db: SqliteDatabase;
  /** ISO 8601 clock; default `new Date().toISOString()`. */
  now?: () => string;
  /** Entry id generator; default `crypto.randomUUID()`. Called outside SQL, so replay stays deterministic. */
  newId?: () => string;
  embedder?: Embedder;
  /**
   * Monotonic ms. With it, retention.max_age and checkpoint.ttl age what this process stored across a wall-clock
   * step (src/kernel/wall-age.ts), and the embedder's backfill pause is measured on it (default performance.now()).
   * Without it (tests of a single clock) ages are wall-clock ages.
   */
  monotonic?: () => number;
  summarizer?: Summarizer;
  /** Close the database with the store (default false: stores usually share one database). */
  ownsDatabase?: boolean;
}

export interface ClawMemoryStore {
  readonly name: string;
  readonly kind: StoreKind;
  store(entries: EntryIn[], ctx?: StoreContext): Promise<string[]>;
  query(q: Query, ctx?: StoreContext): Promise<QueryResult>;
  compact(opts?: CompactOptions, ctx?: StoreContext): Promise<CompactResult>;
  /** Entries currently held (all scopes). */
  count(): number;
  close(): Promise<void>;
}

/**
 * Bad or unsupported parameters for this store (unsupported query type, missing key/text/scope, a request id
 * reused with different entries). `rpcCode` is -32602 (Invalid params).
 */
export class MemoryParamsError extends ClawError {
  readonly rpcCode = ErrorCode.InvalidParams;
  constructor(code: string, message: string) {
    super(code, message);
    this.name = 'MemoryParamsError';
  }
}
