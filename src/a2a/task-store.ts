// Where tasks live between requests and across restarts (docs/a2a.md "Tasks"). With a Memory primitive they are
// rows of the memory database (task-store-sqlite.ts: one journal, one fsync per change). Without one, this file's
// `fileTaskStore`: one JSON file in data_dir, rewritten atomically (tmp + fsync + rename) on every change, so a
// power cut leaves the previous list, never half of one. `memoryTaskStore` keeps them in this process only (tests).
import { promises as fsp } from 'node:fs';
import type { A2aTask } from './types.ts';

export interface TaskStore {
  /** Which backend (logged at start): the memory database, the data_dir file, or this process. */
  readonly kind: 'memory' | 'file' | 'process';
  load(): Promise<A2aTask[]>;
  /** The task as it is now (a new task or a change of state). Durable when it resolves. */
  put(task: A2aTask): Promise<void>;
  /** Tasks dropped by retention. */
  remove(ids: readonly string[]): Promise<void>;
}

/** Tasks in this process only; `save` replaces them all (tests seed a store with it). */
export function memoryTaskStore(): TaskStore & { save(tasks: readonly A2aTask[]): Promise<void> } {
  const kept = new Map<string, A2aTask>();
  return {
    kind: 'process',
    load: async () => structuredClone([...kept.values()]),
    put: async (t) => void kept.set(t.id, structuredClone(t)),
    remove: async (ids) => ids.forEach((id) => kept.delete(id)),
    save: async (tasks) => {
      kept.clear();
      for (const t of tasks) kept.set(t.id, structuredClone(t));
    },
  };
}

/** Reads the kept list; ENOENT is an empty one. */
export async function readTaskFile(file: string): Promise<A2aTask[]> {
  let text: string;
  try {
    text = await fsp.readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  const v = JSON.parse(text) as { tasks?: unknown };
  return Array.isArray(v.tasks) ? (v.tasks as A2aTask[]) : [];
}

export function fileTaskStore(dir: string): TaskStore {
  const file = `${dir}/tasks.json`;
  // The whole list is rewritten on each change (small: bounded by retention); the store keeps the current one.
  const kept = new Map<string, A2aTask>();
  const write = async (): Promise<void> => {
    await fsp.mkdir(dir, { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.tmp`;
    const fh = await fsp.open(tmp, 'w', 0o600);
    try {
      await fh.writeFile(JSON.stringify({ version: 1, tasks: [...kept.values()] }));
      await fh.sync();
      await fh.close();
      await fsp.rename(tmp, file);
    } catch (e) {
      // A write cut short by a full disk holds what space was left: removed, so the disk is not kept full by it
      // (the audit log refuses calls on a full disk) and no temporary file of another pid piles up.
      await fh.close().catch(() => {});
      await fsp.unlink(tmp).catch(() => {});
      throw e;
    }
  };
  return {
    kind: 'file',
    async load() {
      // Temporary files of earlier processes (killed mid-write): never read, only space.
      for (const n of await fsp.readdir(dir).catch(() => [] as string[])) if (/^tasks\.json\.\d+\.tmp$/.test(n)) await fsp.unlink(`${dir}/${n}`).catch(() => {});
      const tasks = await readTaskFile(file);
      kept.clear();
      for (const t of tasks) kept.set(t.id, t);
      return tasks;
    },
    async put(t) {
      kept.set(t.id, t);
      await write();
    },
    async remove(ids) {
      for (const id of ids) kept.delete(id);
      await write();
    },
  };
}
