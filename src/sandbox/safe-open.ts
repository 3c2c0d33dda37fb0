// Opening a file for the file builtins without a race against symlinks (spec §5.8 filesystem scope:
// `..` and symlinks cannot leave it). Judging a path and then opening it by name is not enough: a
// directory of the path can be swapped for a symlink to the outside between the two.
//
// So the path is walked one component at a time. Each step opens `/proc/self/fd/<dir fd>/<name>` with
// O_NOFOLLOW — the kernel looks the name up in the directory already held, never by path again, and
// never follows a symlink in the last step. A symlink met on the way is read (readlink on the same
// fd-relative name) and its target walked in the same way: symlinks are followed as the kernel would,
// `..` after them, but the judgement is made on the path the walk really took. A symlink whose target
// stays inside the scope works; one that leads out is refused like any outside path.
//
//   directories  O_RDONLY | O_DIRECTORY | O_NOFOLLOW
//   final        O_PATH | O_NOFOLLOW, fstat: anything but a regular file is refused unopened (see openFinal)
//   final, read  O_RDONLY | O_NOFOLLOW | O_NONBLOCK      (a fifo does not block the open)
//   final, write O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_TRUNC or O_APPEND
//   then fstat: anything but a regular file is closed and refused.
//   create_dirs: mkdir of one missing name in the held directory (mkdir never follows), then walked.
//
// The walk starts at the shallowest mount root the path names (opened by its real path: the operator's
// directories above a mount are outside the agent's reach), or at `/`. Without /proc/self/fd (not
// Linux, /proc not mounted) a confined open is refused instead of falling back to a racy one.
import { constants } from 'node:fs';
import { mkdir, open, readlink, stat, type FileHandle } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { ClawError } from '../protocol/errors.ts';
import { joinCwd, loadScope, validPath, type Scope } from './paths.ts';
import type { FsCaps } from './spec-view.ts';

export type ScopedOpen = { ok: true; fh: FileHandle; real: string } | { ok: false; reason: string };

export interface OpenRequest {
  path: string;
  cwd: string;
  fs: FsCaps | undefined;
  /** Absent: open for reading. */
  write?: { append: boolean; createDirs: boolean };
}

/** The calls the walk makes, injectable so a test can swap the tree between two of them. */
export interface OpenIo {
  open(path: string, flags: number, mode?: number): Promise<FileHandle>;
  readlink(path: string): Promise<string>;
  mkdir(path: string, recursive: boolean): Promise<void>;
  /** Whether /proc/self/fd/<n>/<name> reaches names through a held directory here. */
  fdPaths(): Promise<boolean>;
}

let fdPathsProbe: Promise<boolean> | undefined;
export const nodeOpenIo: OpenIo = {
  open: (p, flags, mode) => open(p, flags, mode),
  readlink: (p) => readlink(p),
  mkdir: async (p, recursive) => void (await mkdir(p, { recursive })),
  fdPaths: () =>
    (fdPathsProbe ??= stat('/proc/self/fd').then(
      (st) => process.platform === 'linux' && st.isDirectory(),
      () => false,
    )),
};

const MAX_LINKS = 40; // Linux MAXSYMLINKS; also bounds retries when a name changes type under us
const { O_RDONLY, O_WRONLY, O_CREAT, O_TRUNC, O_APPEND, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;
const DIR_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;

// The kernel's PATH_MAX. A walk through /proc/self/fd/<n>/<name> never meets it, so it is applied here to
// the path asked for and to the path really taken: each level holds one descriptor and create_dirs makes
// one directory per name, so a megabyte of `a/a/a…` would otherwise exhaust the runtime's descriptors.
const PATH_MAX = 4096;
function tooLong(path: string): string {
  if (Buffer.byteLength(path) >= PATH_MAX) throw new ClawError('ENAMETOOLONG', `path longer than ${PATH_MAX - 1} bytes`);
  return path;
}

const parts = (p: string) => p.split('/').filter((x) => x !== '' && x !== '.');
const code = (e: unknown) => (e as { code?: string }).code;

export async function openInScope(req: OpenRequest, io: OpenIo = nodeOpenIo): Promise<ScopedOpen> {
  if (!validPath(req.path)) return { ok: false, reason: 'invalid path' };
  const joined = joinCwd(req.path, req.cwd);
  tooLong(joined);
  const access = req.write ? 'write' : 'read';
  const scope = await loadScope(req.fs, req.cwd);
  if (scope.mode === 'deny' || (scope.mode === 'read-only' && access === 'write')) return { ok: false, reason: scope.judge('/', access, req.path) ?? 'denied' };
  if (scope.unconfined(access)) {
    // Nothing to escape from: an ordinary open, symlinks followed by the kernel.
    if (req.write?.createDirs) await io.mkdir(dirname(resolve(joined)), true);
    return { ok: true, fh: await openFinal(io, joined, req, true), real: resolve(joined) };
  }
  if (!(await io.fdPaths())) {
    return { ok: false, reason: 'this host has no /proc/self/fd, so a file cannot be opened race-free inside a filesystem scope (docs/tools.md)' };
  }
  const walk = new Walk(io, scope, req, resolve(joined));
  try {
    return await walk.run(parts(joined));
  } finally {
    await walk.closeAll();
  }
}

// Linux's O_PATH (not in fs.constants): a handle that names the file without opening it.
const O_PATH = process.platform === 'linux' ? 0o10000000 : 0;

async function openFinal(io: OpenIo, path: string, req: OpenRequest, followLink: boolean): Promise<FileHandle> {
  const w = req.write;
  const flags = (w ? O_WRONLY | O_CREAT | (w.append ? O_APPEND : O_TRUNC) : O_RDONLY) | O_NONBLOCK | (followLink ? 0 : O_NOFOLLOW);
  // Opening a device is an action: /dev/watchdog arms the board's watchdog (closed without its magic
  // byte, the board reboots), a serial tty toggles DTR (resets an attached microcontroller), a tape
  // rewinds. So the name is first held with O_PATH, which opens nothing, and its type checked; only a
  // regular file is then opened, through that handle, so it is the same inode.
  if (O_PATH !== 0 && (await io.fdPaths())) {
    let held: FileHandle | undefined;
    try {
      held = await io.open(path, O_PATH | (followLink ? 0 : O_NOFOLLOW));
    } catch (e) {
      if (!(w && code(e) === 'ENOENT')) throw e; // a new file: O_CREAT below makes a regular one
    }
    if (held) {
      try {
        const st = await held.stat();
        if (st.isSymbolicLink()) throw new ClawError('ELOOP', 'a symbolic link as the last component'); // the walk follows it
        if (!st.isFile()) await regularOnly(held); // throws, naming the type
        return await io.open(`/proc/self/fd/${held.fd}`, flags & ~(O_CREAT | O_NOFOLLOW)).then(regularOnly);
      } finally {
        await held.close().catch(() => undefined);
      }
    }
  }
  return io.open(path, flags, 0o644).then(regularOnly);
}

async function regularOnly(fh: FileHandle): Promise<FileHandle> {
  const st = await fh.stat().catch(async (e) => {
    await fh.close();
    throw e;
  });
  if (st.isFile()) return fh;
  await fh.close();
  const what = st.isDirectory() ? 'a directory' : st.isFIFO() ? 'a fifo' : st.isSocket() ? 'a socket' : 'a device or special file';
  throw new ClawError('not-a-regular-file', `${what}, not a regular file`);
}

/** One walk: `names` is the real path taken so far; `fds[i]` holds the directory `/names[0..i)`. */
class Walk {
  private names: string[] = [];
  private fds: (FileHandle | undefined)[] = [];
  private links = 0;

  constructor(
    private readonly io: OpenIo,
    private readonly scope: Scope,
    private readonly req: OpenRequest,
    private readonly lexical: string,
  ) {}

  async run(start: string[]): Promise<ScopedOpen> {
    let pending = await this.anchor(start);
    const access = this.req.write ? 'write' : 'read';
    while (pending.length > 0) {
      const name = pending.shift()!;
      if (name === '..') {
        await this.up();
        continue;
      }
      const real = tooLong(`/${[...this.names, name].join('/')}`);
      const at = `/proc/self/fd/${(await this.dir()).fd}/${name}`;
      if (pending.length === 0) {
        const reason = this.scope.judge(real, access, this.req.path, this.lexical);
        if (reason !== undefined) {
          // Outside, unless it is a symlink leading back in.
          const target = await this.linkTarget(at);
          if (target === undefined) return { ok: false, reason };
          pending = await this.through(target, pending);
          continue;
        }
        try {
          return { ok: true, fh: await openFinal(this.io, at, this.req, false), real };
        } catch (e) {
          if (code(e) !== 'ELOOP') throw e;
          const target = await this.linkTarget(at);
          pending = target === undefined ? this.again(name, pending) : await this.through(target, pending);
          continue;
        }
      }
      try {
        const fh = await this.io.open(at, DIR_FLAGS);
        this.names.push(name);
        this.fds[this.names.length] = fh;
        continue;
      } catch (e) {
        const c = code(e);
        if (c === 'ELOOP' || c === 'ENOTDIR') {
          const target = await this.linkTarget(at);
          if (target !== undefined) {
            pending = await this.through(target, pending);
            continue;
          }
          if (c === 'ELOOP') {
            pending = this.again(name, pending); // was a link, is not any more: look again
            continue;
          }
        }
        // A missing (or non-directory) name: what follows cannot hold links, so the path is judged
        // as written — an outside path is refused the same whether it exists or not.
        const reason =
          this.scope.judge(resolve(real, ...pending), access, this.req.path, this.lexical) ??
          (c === 'ENOENT' && this.req.write?.createDirs ? this.scope.judge(real, 'write', this.req.path) : undefined);
        if (reason !== undefined) return { ok: false, reason };
        if (c !== 'ENOENT' || !this.req.write?.createDirs) throw e;
        await this.io.mkdir(at, false).catch((m) => {
          if (code(m) !== 'EEXIST') throw m;
        });
        pending = this.again(name, pending);
      }
    }
    // The path names a directory the walk stands in (`/`, `mount/..`): nothing to open as a file.
    throw new ClawError('not-a-regular-file', 'a directory, not a regular file');
  }

  /** The target of the symlink at `at`; undefined when it is not a symlink (any more). */
  private async linkTarget(at: string): Promise<string | undefined> {
    try {
      return await this.io.readlink(at);
    } catch (e) {
      if (code(e) === 'EINVAL' || code(e) === 'ENOENT' || code(e) === 'ENOTDIR') return undefined;
      throw e;
    }
  }

  /** Continue through a symlink's target: relative from where the walk stands, absolute re-anchored. */
  private async through(target: string, pending: string[]): Promise<string[]> {
    this.spend();
    return target.startsWith('/') ? this.anchor([...parts(target), ...pending]) : [...parts(target), ...pending];
  }

  /** The same name once more: it changed type under the walk. Bounded like links. */
  private again(name: string, pending: string[]): string[] {
    this.spend();
    return [name, ...pending];
  }

  private spend(): void {
    if (++this.links > MAX_LINKS) throw new ClawError('ELOOP', `too many symbolic links (or a path that keeps changing): ${this.req.path}`);
  }

  /**
   * Start (again) at the shallowest mount root the absolute path `comps` begins with, or at `/`.
   * Returns the components left to walk.
   */
  private async anchor(comps: string[]): Promise<string[]> {
    await this.closeAll();
    for (const root of this.scope.mountRoots) {
      const rp = parts(root);
      if (rp.length > comps.length || rp.some((p, i) => comps[i] !== p)) continue;
      try {
        this.fds[rp.length] = await this.io.open(root, O_RDONLY | O_DIRECTORY);
      } catch {
        continue; // a mount root that is missing or not a directory: walk it like any path
      }
      this.names = rp;
      return comps.slice(rp.length);
    }
    this.names = [];
    return comps;
  }

  /** The held directory the walk stands in; above the anchor it is opened by its (trusted) path. */
  private async dir(): Promise<FileHandle> {
    const depth = this.names.length;
    return (this.fds[depth] ??= await this.io.open(`/${this.names.join('/')}`, O_RDONLY | O_DIRECTORY));
  }

  private async up(): Promise<void> {
    if (this.names.length === 0) return; // `/..` is `/`
    await this.fds[this.names.length]?.close();
    this.fds.length = this.names.length;
    this.names.pop();
  }

  async closeAll(): Promise<void> {
    const open = this.fds.filter((f): f is FileHandle => f !== undefined);
    this.fds = [];
    await Promise.all(open.map((f) => f.close().catch(() => undefined)));
  }
}
