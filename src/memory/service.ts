// The memory of one agent: the Memory primitive's stores opened on one database (src/memory/sqlite) in data_dir,
// workspaces as directories. Opened at STARTING by runtime/memory-module.ts, closed at STOPPING.
import { isAbsolute, join } from 'node:path';
import { ClawError } from '../protocol/errors.ts';
import { makeDirs } from '../node/make-dirs.ts';
import { openDatabase } from './sqlite/open.ts';
import { openMemoryStore, WorkspaceStore, type ClawMemoryStore, type StoreSpec } from './stores/index.ts';
import type { StoreDeps } from './stores/types.ts';
import type { AdapterName, SqliteDatabase } from './sqlite/types.ts';
import type { DurabilityOptions } from './sqlite/durable.ts';

export interface MemoryServiceOptions {
  /** metadata.name of the Memory primitive: names the database file. */
  memoryName: string;
  stores: StoreSpec[];
  dataDir: string;
  /** Template variables of `path` (spec §5.6: `{identity_name}`, `{tenant_id}`). */
  vars: Record<string, string | undefined>;
  /** `~` in a workspace path. */
  home?: string;
  adapter?: AdapterName | 'auto';
  durability?: DurabilityOptions;
  wasmPath?: string;
  /** native only: page size of a new database file. */
  pageSize?: number;
  /** A store's embedder / summarizer (runtime/store-providers.ts); none: full text only, fallback digests. */
  storeDeps?: (spec: StoreSpec) => Pick<StoreDeps, 'embedder' | 'summarizer' | 'monotonic'>;
  /** The runtime's monotonic clock, for every store's retention across a wall-clock step (StoreDeps.monotonic). */
  monotonic?: () => number;
}

export interface MemoryService {
  /** Undefined when every store is a workspace (no database needed). */
  readonly db?: SqliteDatabase;
  readonly dbPath?: string;
  readonly stores: ReadonlyMap<string, ClawMemoryStore>;
  close(): Promise<void>;
}

/** `{var}` templates, `~`, and relative paths (under data_dir/workspaces) → an absolute directory. */
export function resolveWorkspacePath(spec: StoreSpec, o: Pick<MemoryServiceOptions, 'dataDir' | 'vars' | 'home'>): string {
  const raw = spec.path ?? `workspaces/${encodeURIComponent(spec.name)}`;
  const resolved = raw.replace(/\{([a-z_]+)\}/g, (_m, name: string) => {
    const value = o.vars[name];
    if (value === undefined) throw new ClawError('memory.path_template', `workspace '${spec.name}': path variable {${name}} has no value`);
    if (value.includes('/') || value === '..' || value === '.') throw new ClawError('memory.path_template', `workspace '${spec.name}': {${name}} value '${value}' is not a path segment`);
    return value;
  });
  if (resolved === '~' || resolved.startsWith('~/')) {
    if (!o.home) throw new ClawError('memory.path_template', `workspace '${spec.name}': '~' in path but HOME is not set`);
    return join(o.home, resolved.slice(1));
  }
  return isAbsolute(resolved) ? resolved : join(o.dataDir, resolved);
}

export async function openMemoryService(o: MemoryServiceOptions): Promise<MemoryService> {
  const stores = new Map<string, ClawMemoryStore>();
  let db: SqliteDatabase | undefined;
  let dbPath: string | undefined;
  try {
    if (o.stores.some((s) => s.type !== 'workspace')) {
      const dir = join(o.dataDir, 'memory');
      makeDirs(dir);
      dbPath = join(dir, `${encodeURIComponent(o.memoryName)}.db`);
      // 'auto' keeps the memory database on the journalled sql.js path (flash wear; docs/memory.md "Choosing the adapter").
      db = await openDatabase({ path: dbPath, adapter: o.adapter, autoPrefers: 'journal', durability: o.durability, wasmPath: o.wasmPath, pageSize: o.pageSize });
    }
    for (const spec of o.stores) {
      stores.set(spec.name, spec.type === 'workspace' ? new WorkspaceStore(spec, resolveWorkspacePath(spec, o)) : openMemoryStore(spec, { monotonic: o.monotonic, ...o.storeDeps?.(spec), db: db! }));
    }
  } catch (e) {
    for (const s of stores.values()) await s.close().catch(() => {});
    db?.close();
    throw e;
  }
  return {
    db,
    dbPath,
    stores,
    async close() {
      for (const s of stores.values()) await s.close().catch(() => {});
      db?.close();
    },
  };
}
