// Level 3 memory (spec §9.3.4, §11): claw.memory.store / query / compact as a kernel module. The Memory
// primitive's stores (the database in data_dir; sql.js is imported only here) are opened when something first
// needs them — a memory method, the token ledger, a tool call's dedup lookup, the agent loop's history — not at
// STARTING: opening sql.js (WebAssembly compile, journal replay) is most of a Level 3 start and a session may
// never touch memory (docs/memory.md "When the database opens"). STOPPING closes them. A backend that fails
// answers -32030 / -32031 (runtime profile §4) with a message that says what failed, and the runtime stays up.
import * as v from 'valibot';
import { ClawError, ErrorCode, ProtocolError } from '../protocol/errors.ts';
import { issuesData } from '../protocol/wire.ts';
import { memoryCompactParams, memoryQueryParams, memoryStoreParams } from '../memory/wire.ts';
import type { AgentCore, KernelModule, Session } from '../kernel/agent.ts';
import type { MethodSpec } from '../kernel/methods/index.ts';
import type { Clock, Logger } from '../kernel/ports.ts';
import type { RuntimeConfig } from '../config/runtime-config.ts';
import type { LedgerStore } from '../kernel/ledger.ts';
import type { DedupStore } from '../kernel/idempotency.ts';
import type { MemoryService } from '../memory/service.ts';
import type { SqliteDatabase } from '../memory/sqlite/types.ts';
import type { ClawMemoryStore, EntryOut, StoreSpec } from '../memory/stores/types.ts';
import type { ProviderClient, TelemetrySink } from '../kernel/ports.ts';
import type { ResolvedManifest } from '../manifest/resolved.ts';
import type { ProviderDeps } from '../provider/deps.ts';

export interface MemoryModuleDeps {
  config: RuntimeConfig;
  log: Logger;
  dataDir: string;
  /** Monotonic time for the stores' retention across a wall-clock step (docs/boards.md "Clock"). */
  clock?: Pick<Clock, 'monotonic'>;
  /** For `~` in workspace paths. */
  home?: string;
  /**
   * The session's providers (start.ts), for stores that use a model (docs/memory.md "Embeddings and summaries"):
   * `embedding.provider_ref` embeddings, `summarize` compaction through the chain. Called only when a store
   * needs one; absent: full text only and fallback digests.
   */
  providers?: {
    chat(m: ResolvedManifest, telemetry: TelemetrySink): ProviderClient;
    deps(m: ResolvedManifest, telemetry: TelemetrySink): ProviderDeps;
  };
  /** How long a failed open stands before a later memory call tries again (default REOPEN_AFTER_MS). */
  reopenAfterMs?: number;
}

/**
 * A failed open is tried again by the first memory call this long after it: a data directory on storage that
 * mounts late (a USB stick), a disk that was full, a filesystem remounted read-write heal without a restart,
 * which is what the error's `retryable: true` tells the client. Not sooner: a database that cannot open is not
 * re-read on every call.
 */
export const REOPEN_AFTER_MS = 5000;

export interface MemoryModule extends KernelModule {
  /** The ledger to give the tools module: in the memory database while one is open, else `fallback`. */
  ledgerStore(fallback: LedgerStore): LedgerStore;
  /** The tool-call dedup persistence while a memory database is open. */
  dedupStore(): DedupStore | undefined;
  /**
   * The first `conversation` store of the manifest: where the agent loop records turns (FemtoClaw §5.4). It
   * opens the database on first use; if that fails, it keeps nothing (queries find nothing), as no store would.
   */
  conversationStore(): ClawMemoryStore | undefined;
  /** The memory database while it is open: other kernel state kept beside memory (A2A tasks, docs/a2a.md). */
  database?(): SqliteDatabase | undefined;
  /**
   * Pending while the database a manifest declares is not open yet (and starts opening it): a tool call waits
   * for it so a retry after a restart finds its first outcome. Undefined once open, failed, or with no memory.
   */
  whenOpen?(): Promise<void> | undefined;
}

type Partition = { identity?: string; channel?: string } | undefined;

export function memoryModule(d: MemoryModuleDeps): MemoryModule {
  let service: MemoryService | undefined;
  /** Why the backend could not be opened (answered as -32030 until a call after REOPEN_AFTER_MS opens it). */
  let openError: Error | undefined;
  let failedAt = 0;
  let session: Session | undefined;
  let core: AgentCore | undefined;
  /** The open in progress (or done) for this session; undefined until something needs the database. */
  let opening: Promise<void> | undefined;
  let ledger: LedgerStore | undefined;
  let dedup: DedupStore | undefined;
  let fallbackLedger: LedgerStore | undefined;

  /**
   * Calls on one store run one at a time, in arrival order: a query pipelined right behind a store
   * (sent before its reply) sees the entries (profile §8 allows eventual consistency; we give read-your-writes).
   * A call queued behind another starts on a later turn of the event loop: each write is fdatasync'ed while it
   * runs, and a batch of 1,000 stores chained in one turn held every other frame, timer and signal for seconds.
   */
  const queues = new Map<string, Promise<unknown>>();
  const serial = <T>(store: string, op: () => Promise<T>): Promise<T> => {
    const prior = queues.get(store);
    // setImmediate(resolve, reject) resolves on the next turn (with an unused value).
    const run = (prior ? prior.then(() => new Promise(setImmediate)) : Promise.resolve()).then(op);
    const tail = run.catch(() => {});
    queues.set(store, tail);
    void tail.then(() => queues.get(store) === tail && queues.delete(store));
    return run;
  };

  /** Opens the Memory primitive's stores for session `s`; a failure is kept in openError (the agent stays up). */
  const open = async (s: Session, agentCore: AgentCore | undefined): Promise<void> => {
    const m = s.manifest;
    if (!m.memory) return;
    const c = d.config.memory;
    let opened: MemoryService | undefined;
    try {
      const specs = m.memory.spec.stores as StoreSpec[];
      const providers = d.providers;
      // Provider code loads only when a store uses a model (embeddings, summarize).
      let storeDeps: import('../memory/service.ts').MemoryServiceOptions['storeDeps'];
      if (providers && agentCore && specs.some(usesModel)) {
        const { storeProviders } = await import('./store-providers.ts');
        const telemetry = agentCore.telemetry;
        const deps = providers.deps(m, telemetry);
        storeDeps = storeProviders({
          manifest: m,
          deps,
          chat: () => providers.chat(m, telemetry),
          log: d.log,
          signal: s.abort.signal,
          monotonic: () => deps.clock.monotonic(),
        });
      }
      // Which V8 tier runs sql.js: decided and applied by the boot loader (docs/memory.md "Memory budget"); logged here.
      const wasm = c?.adapter === 'native' ? undefined : await (await import('../node/wasm-tier.ts')).hostWasmTier();
      const { openMemoryService } = await import('../memory/service.ts');
      opened = await openMemoryService({
        memoryName: m.memory.name,
        stores: specs,
        storeDeps,
        monotonic: d.clock ? () => d.clock!.monotonic() : undefined,
        dataDir: d.dataDir,
        vars: { identity_name: m.identity.name, tenant_id: typeof m.annotations.tenant_id === 'string' ? m.annotations.tenant_id : undefined },
        home: d.home,
        adapter: c?.adapter,
        pageSize: c?.page_size,
        durability: {
          snapshotRatio: c?.snapshot?.ratio,
          minJournalBytes: c?.snapshot?.min_journal_bytes,
          maxJournalBytes: c?.snapshot?.max_journal_bytes,
          maxSnapshotAgeMs: c?.snapshot?.max_age_ms,
          onWarning: (w) => d.log.warn('memory storage', { code: w.code, warning: w.message }),
        },
      });
      const tables = opened.db ? await import('../memory/kernel-tables.ts') : undefined;
      if (session !== s) {
        // The session stopped while the database was opening: nobody will use or close it.
        await opened.close().catch(() => {});
        return;
      }
      if (opened.db && tables) {
        ledger = tables.sqliteLedgerStore(opened.db, fallbackLedger);
        dedup = tables.sqliteDedupStore(opened.db);
      }
      service = opened;
      d.log.info('memory open', { stores: [...opened.stores.values()].map((x) => `${x.name}:${x.kind}`), database: opened.dbPath, adapter: opened.db?.adapter, engine: opened.db?.engine,
        ...(opened.db?.engine === 'sql.js' && wasm ? { wasm: wasm.tier, budget_mb: wasm.budgetMb ?? null, budget_from: wasm.source } : {}) });
    } catch (e) {
      if (session !== s) return;
      // Memory calls answer -32030 with this reason; everything else works.
      openError = e as Error;
      failedAt = performance.now();
      service = undefined;
      d.log.error('memory backend unavailable', { code: (e as ClawError).code, error: (e as Error).message });
    }
  };

  const specsOf = (): StoreSpec[] => (session?.manifest.memory?.spec.stores ?? []) as StoreSpec[];

  /** Opens the database on first need; resolves once it is open or has failed (openError). */
  const needed = (): Promise<void> | undefined => {
    if (!session?.manifest.memory || service) return undefined;
    if (openError) {
      if (performance.now() - failedAt < (d.reopenAfterMs ?? REOPEN_AFTER_MS)) return undefined;
      openError = undefined;
      opening = undefined;
    }
    return (opening ??= open(session, core));
  };

  const storeOf = async (name: string): Promise<{ store: ClawMemoryStore; spec: StoreSpec }> => {
    const specs = specsOf();
    const spec = specs.find((s) => s.name === name);
    // §9.3.4: `store` names a store of the Memory primitive.
    if (!spec) throw new ProtocolError(ErrorCode.InvalidParams, `Invalid params: unknown memory store "${name}"`, { store: name, available: specs.map((s) => s.name) });
    await needed();
    if (openError || !service) {
      throw new ProtocolError(ErrorCode.MemoryBackendError, `Memory backend error: ${openError?.message ?? 'the memory backend is not open'}`, { store: name, retryable: true });
    }
    return { store: service.stores.get(name)!, spec };
  };

  /** The partition value of a scoped store (key-value `scope`, workspace `isolation`). */
  const partitionOf = (spec: StoreSpec, ctx: Partition): string | undefined => {
    const m = session!.manifest;
    const mode = spec.type === 'workspace' ? (spec.isolation ?? 'shared') : (spec.scope ?? 'global');
    if (mode === 'per-identity') return ctx?.identity ?? m.identity.name;
    if (mode === 'per-channel') {
      if (ctx?.channel) return ctx.channel;
      if (m.channels.length === 1) return m.channels[0].name;
      throw new ProtocolError(ErrorCode.InvalidParams, `Invalid params: store "${spec.name}" is per-channel: context.channel is required`, { store: spec.name });
    }
    return undefined;
  };

  const fail = (e: unknown, store: string, code: number): never => {
    if (e instanceof ProtocolError) throw e;
    const err = e as ClawError & { rpcCode?: number };
    // A store closed under a call (the session stopped before it drained) is the backend going away, not bad params.
    if (err?.rpcCode === ErrorCode.InvalidParams && err.code !== 'memory.closed') throw new ProtocolError(ErrorCode.InvalidParams, `Invalid params: ${err.message}`, { store, reason: err.code });
    d.log.error('memory backend error', { store, code: err?.code, error: String(err?.message ?? e) });
    const what = code === ErrorCode.MemoryQueryFailed ? 'Memory query failed' : 'Memory backend error';
    throw new ProtocolError(code, `${what}: store "${store}": ${String(err?.message ?? e)}`, { store, reason: err?.code ?? 'internal', retryable: true });
  };

  const bad = (method: string, issues: readonly v.BaseIssue<unknown>[]) => new ProtocolError(ErrorCode.InvalidParams, `Invalid params for ${method}`, issuesData(issues));

  const storeMethod: MethodSpec = {
    level: 3,
    states: ['READY'],
    async handler(params) {
      const p = v.safeParse(memoryStoreParams, params);
      if (!p.success) throw bad('claw.memory.store', p.issues);
      const { store, entries, context } = p.output;
      const s = await storeOf(store);
      try {
        const scope = partitionOf(s.spec, context);
        const ids = await serial(store, () => s.store.store(entries, { requestId: context.request_id, scope }));
        return { stored: ids.length, ids };
      } catch (e) {
        return fail(e, store, ErrorCode.MemoryBackendError);
      }
    },
  };

  const queryMethod: MethodSpec = {
    level: 3,
    states: ['READY'],
    async handler(params) {
      const p = v.safeParse(memoryQueryParams, params);
      if (!p.success) throw bad('claw.memory.query', p.issues);
      const { store, query, context } = p.output;
      // §9.3.4: text REQUIRED for semantic, key for key, time_range for time-range.
      const need = { semantic: 'text', key: 'key', 'time-range': 'time_range' }[query.type] as 'text' | 'key' | 'time_range';
      if (query[need] === undefined) {
        throw new ProtocolError(ErrorCode.InvalidParams, 'Invalid params for claw.memory.query', {
          issues: [{ path: `query.${need}`, message: `required for a ${query.type} query` }],
        });
      }
      const s = await storeOf(store);
      try {
        const scope = partitionOf(s.spec, context);
        const r = await serial(store, () => s.store.query(query, { scope }));
        const out: Record<string, unknown> = { entries: r.entries.map(wireEntry) };
        // A store that declares an embedding provider says which search ran, and why full text alone (docs/memory.md).
        if (s.spec.embedding && query.type === 'semantic' && s.spec.search?.strategy !== 'fts-only') {
          out.metadata =
            r.search === 'fts'
              ? { search: 'fts', reason: r.fallback ?? `embedding provider "${s.spec.embedding.provider_ref}" did not answer; full-text search only` }
              : { search: r.search };
        }
        return out;
      } catch (e) {
        return fail(e, store, ErrorCode.MemoryQueryFailed);
      }
    },
  };

  const compactMethod: MethodSpec = {
    level: 3,
    states: ['READY'],
    async handler(params) {
      const p = v.safeParse(memoryCompactParams, params);
      if (!p.success) throw bad('claw.memory.compact', p.issues);
      const { store, context } = p.output;
      const s = await storeOf(store);
      try {
        const scope = context ? partitionOf(s.spec, context) : undefined;
        const r = await serial(store, () => s.store.compact({}, { scope }));
        const out: Record<string, unknown> = { entries_before: r.entries_before, entries_after: r.entries_after };
        // summarize says who wrote the digests: the provider chain, or the deterministic fallback and why (docs/memory.md).
        if (r.strategy === 'summarize' && r.entries_after < r.entries_before) {
          out.metadata = {
            strategy: 'summarize',
            summarizer: r.summarizer === 'summarizer' ? 'provider' : 'fallback',
            ...(r.summarizer === 'summarizer' ? {} : { reason: r.summarizer_error ?? 'no provider declared' }),
          };
          if (r.summarizer_error) d.log.warn('memory summarize fell back to digests', { store, error: r.summarizer_error });
        }
        return out;
      } catch (e) {
        return fail(e, store, ErrorCode.MemoryBackendError);
      }
    },
  };

  return {
    name: 'memory',
    methods: { 'claw.memory.store': storeMethod, 'claw.memory.query': queryMethod, 'claw.memory.compact': compactMethod },
    async start(s, c) {
      session = s;
      core = c;
      openError = undefined;
      opening = undefined;
      // Nothing is opened here (see the top of this file). No Memory primitive: nothing to open, no sql.js
      // loaded. Below Level 3 the memory *methods* answer -32601 (§11, checked by the kernel), but the agent
      // loop still records its conversation in a declared store.
    },
    async stop() {
      const pending = opening;
      opening = undefined;
      session = undefined;
      core = undefined;
      // An open in progress finishes first (it closes what it opened once it sees the session gone).
      await pending;
      ledger = undefined;
      dedup = undefined;
      const sv = service;
      service = undefined;
      await sv?.close().catch((e) => d.log.warn('memory close failed', { error: String(e) }));
    },
    ledgerStore(fallback) {
      fallbackLedger = fallback;
      return {
        load: async (p) => {
          await needed();
          return (ledger ?? fallback).load(p);
        },
        save: async (p, e) => {
          await needed();
          return (ledger ?? fallback).save(p, e);
        },
      };
    },
    dedupStore: () => dedup,
    database: () => service?.db,
    whenOpen: needed,
    conversationStore() {
      const spec = specsOf().find((x) => x.type === 'conversation');
      if (!spec) return undefined;
      const open = service?.stores.get(spec.name);
      if (open) return open;
      /** The store once the database is open; undefined if it could not be opened. */
      const real = async () => {
        await needed();
        return service?.stores.get(spec.name);
      };
      return {
        name: spec.name,
        kind: 'conversation',
        store: async (entries, ctx) => (await real())?.store(entries, ctx) ?? [],
        query: async (q, ctx) => (await real())?.query(q, ctx) ?? { entries: [], search: 'time-range' },
        compact: async (o, ctx) => (await real())?.compact(o, ctx) ?? { entries_before: 0, entries_after: 0, strategy: 'truncate' },
        count: () => service?.stores.get(spec.name)?.count() ?? 0,
        // Closed with the database (stop()).
        close: async () => {},
      };
    },
  };
}

/** A store that talks to a model: embeddings for hybrid search, or `summarize` compaction (store-providers.ts). */
function usesModel(spec: StoreSpec): boolean {
  return (spec.type === 'semantic' && spec.embedding !== undefined && spec.search?.strategy !== 'fts-only') || spec.compaction?.strategy === 'summarize';
}

/** §9.3.4 entry shape: id, content, score (semantic), timestamp; the stored metadata when there is some. */
function wireEntry(e: EntryOut): Record<string, unknown> {
  const out: Record<string, unknown> = { id: e.id, content: e.content };
  if (e.score !== undefined) out.score = e.score;
  out.timestamp = e.timestamp;
  if (e.metadata !== undefined) out.metadata = e.metadata;
  return out;
}
