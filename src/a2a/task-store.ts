// Where tasks live between requests and across restarts (docs/a2a.md "Tasks"). With a Memory primitive they are
// rows of the memory database (task-store-sqlite.ts: one journal, one fsync per change). Without one, this file's
// `fileTaskStore`: in data_dir, the list `tasks.json` (written whole, atomically: tmp + fsync + rename) and the
// journal `tasks.jsonl` (one fsynced line per change since). Rewriting the list at every change wrote (tasks kept ×
// changes) bytes — 183 MB for 300 tasks of 1 KB; the list is now rewritten only once the journal has grown past it
// (and at open), so bytes written stay within a few times those of the changes. A power cut leaves the list and
// the journal up to its last whole line. `memoryTaskStore` keeps them in this process only (tests).
import { existsSync, promises as fsp } from 'node:fs';
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

type JournalLine = { put: A2aTask } | { remove: string[] };

/** The journal next to a list file: tasks.json → tasks.jsonl. */
export const journalOf = (file: string): string => `${file}l`;

async function readOrEmpty(file: string): Promise<string> {
  try {
    return await fsp.readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw e;
  }
}

/**
 * Reads the kept list and replays its journal over it; no file is an empty list. A line that does not parse (the
 * last one, cut by a crash mid-append) is skipped: every line before it was fsynced whole.
 */
export async function readTaskFile(file: string): Promise<A2aTask[]> {
  const text = await readOrEmpty(file);
  const v = text === '' ? {} : (JSON.parse(text) as { tasks?: unknown });
  const kept = new Map<string, A2aTask>();
  for (const t of Array.isArray(v.tasks) ? (v.tasks as A2aTask[]) : []) kept.set(t.id, t);
  for (const line of (await readOrEmpty(journalOf(file))).split('\n')) {
    let j: JournalLine;
    try {
      j = JSON.parse(line) as JournalLine;
    } catch {
      continue;
    }
    if (j && 'put' in j && j.put && typeof j.put.id === 'string') kept.set(j.put.id, j.put);
    else if (j && 'remove' in j && Array.isArray(j.remove)) for (const id of j.remove) kept.delete(id);
  }
  return [...kept.values()];
}

/** The journal is folded into the list once it is larger than this and than the list (amortised: a few × the changes). */
const MIN_COMPACT_BYTES = 64 * 1024;

export function fileTaskStore(dir: string): TaskStore {
  const file = `${dir}/tasks.json`;
  const journal = journalOf(file);
  // What the list and the journal hold together; the list is rewritten from it.
  const kept = new Map<string, A2aTask>();
  let listBytes = 0;
  let journalBytes = 0;
  /** A journal append failed: the next write rewrites the list (nothing is known of what the journal holds). */
  let rewrite = true;
  const writeList = async (): Promise<void> => {
    await fsp.mkdir(dir, { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.tmp`;
    const body = JSON.stringify({ version: 1, tasks: [...kept.values()] });
    const fh = await fsp.open(tmp, 'w', 0o600);
    try {
      await fh.writeFile(body);
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
    // The list holds every change: the journal's lines are in it (replaying them over it changes nothing, so a
    // crash before this unlink loses nothing).
    await fsp.unlink(journal).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'ENOENT') throw e;
    });
    listBytes = Buffer.byteLength(body);
    journalBytes = 0;
    rewrite = false;
  };
  const append = async (line: JournalLine): Promise<void> => {
    if (rewrite || journalBytes > Math.max(MIN_COMPACT_BYTES, listBytes)) return writeList();
    const text = `${JSON.stringify(line)}\n`;
    const fh = await fsp.open(journal, 'a', 0o600);
    try {
      await fh.writeFile(text);
      await fh.sync();
      journalBytes += Buffer.byteLength(text);
    } catch (e) {
      // Part of a line may be on disk: the next write rewrites the list and drops the journal.
      rewrite = true;
      throw e;
    } finally {
      await fh.close().catch(() => {});
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
      // Folded at open: a torn last line is dropped before anything is appended after it.
      rewrite = true;
      if (existsSync(journal)) await writeList();
      return tasks;
    },
    async put(t) {
      kept.set(t.id, t);
      await append({ put: t });
    },
    async remove(ids) {
      for (const id of ids) kept.delete(id);
      await append({ remove: [...ids] });
    },
  };
}
