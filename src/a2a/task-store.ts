// Where tasks live between requests and across restarts (docs/a2a.md "Tasks"): one JSON file in data_dir,
// rewritten atomically (tmp + fsync + rename) on every change, so a power cut leaves the previous list, never
// half of one. `memoryTaskStore` keeps them in this process only (tests, and when no data_dir is writable).
import { promises as fsp } from 'node:fs';
import type { A2aTask } from './types.ts';

export interface TaskStore {
  load(): Promise<A2aTask[]>;
  /** The whole current list: small (max_tasks), so a rewrite is simpler and safer than a journal. */
  save(tasks: readonly A2aTask[]): Promise<void>;
}

export function memoryTaskStore(): TaskStore {
  let kept: A2aTask[] = [];
  return {
    load: async () => structuredClone(kept),
    save: async (tasks) => {
      kept = structuredClone([...tasks]);
    },
  };
}

export function fileTaskStore(dir: string): TaskStore {
  const file = `${dir}/tasks.json`;
  return {
    async load() {
      let text: string;
      try {
        text = await fsp.readFile(file, 'utf8');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
        throw e;
      }
      const v = JSON.parse(text) as { tasks?: unknown };
      return Array.isArray(v.tasks) ? (v.tasks as A2aTask[]) : [];
    },
    async save(tasks) {
      await fsp.mkdir(dir, { recursive: true, mode: 0o700 });
      const tmp = `${file}.${process.pid}.tmp`;
      const fh = await fsp.open(tmp, 'w', 0o600);
      try {
        await fh.writeFile(JSON.stringify({ version: 1, tasks }));
        await fh.sync();
      } finally {
        await fh.close();
      }
      await fsp.rename(tmp, file);
    },
  };
}
