// `workspace` store (spec §5.6: "files, documents, generated artifacts; filesystem operations"): a directory.
// An entry is a file: `key` is its path relative to the workspace (required), `content` its text (objects as
// JSON); the entry id is that path, the timestamp the file's mtime. `metadata` is not kept (a file has none).
//   - `path`: the module resolves `{identity_name}` / `{tenant_id}` and `~` before this store sees it (§5.6
//     "MUST resolve these before filesystem access"); relative paths are under the runtime's data_dir.
//   - `isolation`: 'shared' = the directory itself; 'per-identity' / 'per-channel' = one sub-directory per
//     identity / channel name (StoreContext.scope), so one identity's or channel's files are invisible to another.
//   - `max_size_mb`: a write that would take the partition over the limit is refused whole (nothing written).
// Keys cannot leave the partition: no absolute paths, no `..`, no NUL, no symlinked directory out of it.
// Writes are atomic (tmp + fsync + rename + fsync dir): an acknowledged file is on disk, a crash leaves the old one.
// A repeated request_id rewrites the same paths with the same bytes and returns the same ids (naturally idempotent).
// Query: `key` (the file), `time-range` (files by mtime, chronological), `semantic` (BM25 over the files' text).
// claw.memory.compact makes no sense here (files are not entries to merge): -32602.
import * as fs from 'node:fs';
import { nodeCrypto } from '../../node/lazy.ts';
import { makeDirs } from '../../node/make-dirs.ts';
import { dirname, join, relative, sep } from 'node:path';
import { ClawError } from '../../protocol/errors.ts';
import { isoTime } from './base.ts';
import { bm25Js, normaliseBm25 } from './ranking.ts';
import { DEFAULT_TOP_K } from './semantic.ts';
import {
  MemoryParamsError,
  type ClawMemoryStore,
  type CompactResult,
  type EntryIn,
  type EntryOut,
  type Query,
  type QueryResult,
  type StoreContext,
  type StoreSpec,
} from './types.ts';

const TMP_PREFIX = '.claw-tmp-';
/** Files larger than this are not read for semantic queries (they are still counted and readable by key). */
const MAX_INDEXED_FILE = 1024 * 1024;

interface FileInfo {
  rel: string;
  abs: string;
  size: number;
  mtimeMs: number;
}

export class WorkspaceStore implements ClawMemoryStore {
  readonly kind = 'workspace' as const;
  readonly name: string;
  private closed = false;

  constructor(
    readonly spec: StoreSpec,
    /** The resolved directory (templates, `~` and relative paths already resolved). */
    readonly root: string,
  ) {
    this.name = spec.name;
    makeDirs(root);
  }

  /** The partition directory for a call (isolation). */
  private dir(ctx: StoreContext | undefined): string {
    const iso = this.spec.isolation ?? 'shared';
    if (iso === 'shared') return this.root;
    if (typeof ctx?.scope !== 'string' || ctx.scope === '')
      throw new MemoryParamsError('memory.scope_required', `workspace '${this.name}' is ${iso}: a scope value is required`);
    const d = join(this.root, encodeURIComponent(ctx.scope));
    fs.mkdirSync(d, { recursive: true, mode: 0o700 });
    return d;
  }

  private target(base: string, key: unknown, i: number): string {
    if (typeof key !== 'string' || key === '')
      throw new MemoryParamsError('memory.key_required', `entries[${i}].key (a relative file path) is required by workspace '${this.name}'`);
    const parts = key.split(/[\\/]+/).filter((p) => p !== '' && p !== '.');
    if (key.startsWith('/') || key.includes('\0') || parts.length === 0 || parts.some((p) => p === '..' || p.startsWith(TMP_PREFIX)))
      throw new MemoryParamsError('memory.invalid_key', `entries[${i}].key '${key}' must be a relative path inside the workspace`);
    return join(base, ...parts);
  }

  /** Refuses a path whose existing parent resolves (through symlinks) outside the partition. */
  private checkInside(base: string, abs: string, key: string): void {
    const realBase = fs.realpathSync(base);
    let p = dirname(abs);
    while (!fs.existsSync(p)) p = dirname(p);
    const real = fs.realpathSync(p);
    if (real !== realBase && !real.startsWith(realBase + sep))
      throw new MemoryParamsError('memory.invalid_key', `key '${key}' leads outside the workspace`);
    if (fs.existsSync(abs) && fs.lstatSync(abs).isSymbolicLink())
      throw new MemoryParamsError('memory.invalid_key', `key '${key}' is a symbolic link`);
  }

  async store(entries: EntryIn[], ctx: StoreContext = {}): Promise<string[]> {
    this.assertOpen();
    if (!Array.isArray(entries)) throw new MemoryParamsError('memory.invalid_entries', 'entries must be an array');
    const base = this.dir(ctx);
    const planned = entries.map((e, i) => {
      if (typeof e !== 'object' || e === null) throw new MemoryParamsError('memory.invalid_entries', `entries[${i}] must be an object`);
      const text =
        typeof e.content === 'string' ? e.content : typeof e.content === 'object' && e.content !== null ? JSON.stringify(e.content) : undefined;
      if (text === undefined) throw new MemoryParamsError('memory.invalid_entries', `entries[${i}].content must be a string or an object`);
      const abs = this.target(base, e.key, i);
      this.checkInside(base, abs, e.key!);
      return { abs, rel: relative(base, abs).split(sep).join('/'), bytes: Buffer.from(text, 'utf8') };
    });
    // The size limit holds for the partition after the whole call: the last write to a path wins.
    const limit = this.spec.max_size_mb;
    if (limit !== undefined) {
      const sizes = new Map(this.files(base).map((f) => [f.abs, f.size]));
      for (const p of planned) sizes.set(p.abs, p.bytes.length);
      const total = [...sizes.values()].reduce((a, b) => a + b, 0);
      if (total > limit * 1024 * 1024)
        throw new ClawError('memory.workspace_full', `workspace '${this.name}' would hold ${total} bytes, over its max_size_mb of ${limit}; nothing was written`);
    }
    for (const p of planned) writeAtomic(p.abs, p.bytes);
    return planned.map((p) => p.rel);
  }

  async query(q: Query, ctx: StoreContext = {}): Promise<QueryResult> {
    this.assertOpen();
    if (typeof q !== 'object' || q === null || typeof q.type !== 'string') throw new MemoryParamsError('memory.invalid_query', 'query.type is required');
    if (q.top_k !== undefined && (!Number.isInteger(q.top_k) || q.top_k < 1))
      throw new MemoryParamsError('memory.invalid_query', 'query.top_k must be a positive integer');
    const base = this.dir(ctx);
    if (q.type === 'key') {
      const abs = this.target(base, q.key, 0);
      this.checkInside(base, abs, String(q.key));
      let st: fs.Stats;
      try {
        st = fs.statSync(abs);
      } catch {
        return { entries: [], search: 'key' };
      }
      if (!st.isFile()) return { entries: [], search: 'key' };
      return { entries: [this.out({ rel: relative(base, abs).split(sep).join('/'), abs, size: st.size, mtimeMs: st.mtimeMs })], search: 'key' };
    }
    if (q.type === 'time-range') {
      const from = q.time_range?.from ?? q.from;
      const to = q.time_range?.to ?? q.to;
      const lo = from === undefined ? -Infinity : Date.parse(isoTime(String(from), 'time_range.from'));
      const hi = to === undefined ? Infinity : Date.parse(isoTime(String(to), 'time_range.to'));
      let files = this.files(base)
        .filter((f) => f.mtimeMs >= lo && f.mtimeMs <= hi)
        .sort((a, b) => a.mtimeMs - b.mtimeMs || a.rel.localeCompare(b.rel));
      if (q.top_k !== undefined) files = files.slice(-q.top_k);
      return { entries: files.map((f) => this.out(f)), search: 'time-range' };
    }
    if (q.type === 'semantic') {
      if (typeof q.text !== 'string' || q.text.trim() === '')
        throw new MemoryParamsError('memory.invalid_query', 'query.text is required for a semantic query');
      const files = this.files(base).filter((f) => f.size <= MAX_INDEXED_FILE);
      const texts = files.map((f) => fs.readFileSync(f.abs, 'utf8'));
      const xs = bm25Js(texts, q.text);
      const ranked = files
        .map((f, i) => ({ f, text: texts[i], score: normaliseBm25(xs[i]) }))
        .filter((x) => x.score > 0)
        .sort((a, b) => b.score - a.score || a.f.rel.localeCompare(b.f.rel))
        .slice(0, q.top_k ?? DEFAULT_TOP_K);
      return { entries: ranked.map((x) => ({ ...this.out(x.f, x.text), score: x.score })), search: 'fts', fts: 'js' };
    }
    throw new MemoryParamsError(
      'memory.unsupported_query',
      `query type '${q.type}' is not supported by workspace store '${this.name}' (supported: key, time-range, semantic)`,
    );
  }

  async compact(): Promise<CompactResult> {
    throw new MemoryParamsError(
      'memory.unsupported_method',
      `claw.memory.compact does not apply to workspace store '${this.name}': its entries are files, not a history to compact`,
    );
  }

  count(): number {
    return this.files(this.root).length;
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private out(f: FileInfo, text?: string): EntryOut {
    return { id: f.rel, content: text ?? fs.readFileSync(f.abs, 'utf8'), timestamp: new Date(f.mtimeMs).toISOString(), key: f.rel };
  }

  /** Regular files under `base`, recursively (symlinks are not followed, in-progress temporaries skipped). */
  private files(base: string): FileInfo[] {
    const out: FileInfo[] = [];
    const walk = (d: string) => {
      let list: fs.Dirent[];
      try {
        list = fs.readdirSync(d, { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of list) {
        if (e.name.startsWith(TMP_PREFIX)) continue;
        const abs = join(d, e.name);
        if (e.isDirectory()) walk(abs);
        else if (e.isFile()) {
          const st = fs.statSync(abs);
          out.push({ rel: relative(base, abs).split(sep).join('/'), abs, size: st.size, mtimeMs: st.mtimeMs });
        }
      }
    };
    walk(base);
    return out;
  }

  private assertOpen(): void {
    if (this.closed) throw new MemoryParamsError('memory.closed', `store '${this.name}' is closed`);
  }
}

/** tmp + fsync + rename + fsync(dir): the file is either the old one or the complete new one. */
function writeAtomic(abs: string, bytes: Uint8Array): void {
  const dir = dirname(abs);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = join(dir, `${TMP_PREFIX}${nodeCrypto().randomUUID()}`);
  const fd = fs.openSync(tmp, 'w', 0o600);
  try {
    fs.writeSync(fd, bytes, 0, bytes.length, 0);
    fs.fsyncSync(fd);
  } catch (e) {
    fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw new ClawError('memory.workspace_write', `workspace write of ${abs} failed (${(e as { code?: string }).code ?? e})`, { cause: e });
  }
  fs.closeSync(fd);
  fs.renameSync(tmp, abs);
  try {
    const dfd = fs.openSync(dir, 'r');
    fs.fsyncSync(dfd);
    fs.closeSync(dfd);
  } catch {
    // a directory cannot be fsynced everywhere; the rename is still atomic
  }
}
