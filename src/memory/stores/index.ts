// Opens a store of a Memory manifest's `spec.stores[]` entry on a SqliteDatabase (src/memory/sqlite).
import { ClawError } from '../../protocol/errors.ts';
import { ConversationStore } from './conversation.ts';
import { KeyValueStore } from './key-value.ts';
import { SemanticStore } from './semantic.ts';
import { CheckpointStore } from './checkpoint.ts';
import { WorkspaceStore } from './workspace.ts';
import type { ClawMemoryStore, StoreDeps, StoreSpec } from './types.ts';

export const SUPPORTED_STORE_TYPES = ['conversation', 'key-value', 'semantic', 'checkpoint', 'workspace'] as const;

/** Synchronous: creates the tables the store needs (idempotent) and returns it. Workspace: `new WorkspaceStore(spec, dir)` (no database). */
export function openMemoryStore(spec: StoreSpec, deps: StoreDeps): ClawMemoryStore {
  switch (spec.type) {
    case 'conversation':
      return new ConversationStore(spec, deps);
    case 'key-value':
      return new KeyValueStore(spec, deps);
    case 'semantic':
      return new SemanticStore(spec, deps);
    case 'checkpoint':
      return new CheckpointStore(spec, deps);
    default:
      throw new ClawError('memory.unsupported_store_type', `store '${spec.name}': type '${spec.type}' is not provided by the SQLite stores`);
  }
}

export { ConversationStore, KeyValueStore, SemanticStore, CheckpointStore, WorkspaceStore };
export * from './types.ts';
export { fallbackDigest, parseDuration } from './base.ts';
export { normaliseBm25, reciprocalRankFusion, bm25FromMatchinfo } from './ranking.ts';
