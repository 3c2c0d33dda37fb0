// V8 code caches of the runtime's chunks (docs/startup.md). Used only by the loader (targets/boot.ts): each chunk
// is compiled with vm.Script, handing V8 the bytecode an earlier start produced for the same chunk, so the
// functions a start runs are not parsed and compiled again.
//
// A file holds V8's data as createCachedData() returned it. V8 checks it before use (its version, the flags,
// the source's length; `script.cachedDataRejected`) and the file name carries the chunk's content hash, so a
// file from another build or another Node is never taken for this one. Files are written atomically (temporary
// file + rename) and read only when this user owns them and nobody else can write them: their bytes become code.
import { builtin } from './builtin.ts';

// node:fs through builtin(), not an ESM import (see builtin.ts).
const fs = () => builtin('node:fs');

/**
 * Set by the loader before the first chunk compiles, whenever caches are read or written. V8 release builds
 * neither write nor check a code cache's payload checksum; a file damaged on disk (an SD card's bit flip) with an
 * intact header then crashes V8 inside deserialisation at every start, a restart loop no restart policy ends.
 * With the checksum V8 rejects such a file (`cachedDataRejected`) and the loader writes a good one
 * (docs/startup.md "The code cache": under a millisecond per start).
 */
export const CACHE_V8_FLAGS = '--verify-snapshot-checksum';

const MAX_BYTES = 16 * 1024 * 1024;
const FNV_OFFSET = 0x811c9dc5 | 0;
const FNV_PRIME = 16777619;
/** Old cache files (other builds, other Node versions; one per chunk file and command) beyond this many are removed when a new one is written. */
const KEEP_FILES = 256;

/**
 * Where caches live: $CLAW_CACHE_DIR, else $XDG_CACHE_HOME/claw-edge (absolute only, as the XDG spec says),
 * else $HOME/.cache/claw-edge, else %LOCALAPPDATA%/claw-edge. `CLAW_CODE_CACHE=0` (or an empty
 * CLAW_CACHE_DIR) turns the cache off.
 */
export function cacheDir(env: Record<string, string | undefined>, cwd: () => string = process.cwd): string | undefined {
  if (env.CLAW_CODE_CACHE === '0') return undefined;
  const own = env.CLAW_CACHE_DIR;
  if (own !== undefined) return own === '' ? undefined : isAbsolute(own) ? own : `${cwd()}/${own}`;
  if (env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME)) return `${env.XDG_CACHE_HOME}/claw-edge`;
  if (env.HOME) return `${env.HOME}/.cache/claw-edge`;
  if (env.LOCALAPPDATA) return `${env.LOCALAPPDATA}/claw-edge`;
  return undefined;
}

const isAbsolute = (p: string) => p.startsWith('/') || /^[A-Za-z]:[\\/]/.test(p) || p.startsWith('\\\\');

/** FNV-1a over a short string's UTF-16 units, as 8 hex digits (the cache key's flag part). */
export function hashText(text: string): string {
  let h = FNV_OFFSET;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), FNV_PRIME);
  return (h >>> 0).toString(16).padStart(8, '0');
}

export interface CacheKey {
  /** The chunk file's name without `.js`: `<label>-<hash of its content>` (scripts/build/chunks.mjs). */
  chunk: string;
  command: string;
  nodeVersion: string;
  arch: string;
  /** Everything that changes V8's flags: process.execArgv and NODE_OPTIONS. */
  flags: string;
}

/**
 * One file per chunk (its content hash is in its name), command, Node version, architecture and set of flags.
 * V8 would reject a cache made under other flags anyway; keying by them keeps two configurations from
 * overwriting each other's cache. Per command, because each command runs different code of the same chunk at
 * start-up: a `claw --version` must not leave `claw run` a cache of the module top levels only.
 */
export function cacheFileName(k: CacheKey): string {
  return `${k.chunk}-${k.command}-${k.nodeVersion}-${k.arch}-${hashText(k.flags)}.v8cache`;
}

/**
 * The command word the cache is kept for (`run`, `validate`, ...), or undefined (flags, help, nothing, and the
 * internal `__` commands). Those run as a tool's child — the builtin worker under the process sandbox — whose
 * HOME is the tool's working directory: its cache directory would be the agent's workspace, hidden files in it,
 * and a file a tool planted there (same uid, mode 0600: trusted()) would become code in a later worker.
 */
export function cacheCommand(argv: readonly string[]): string | undefined {
  const c = argv[2];
  return c !== undefined && /^[a-z][a-z_]{0,15}$/.test(c) ? c : undefined;
}

/**
 * Only a file this user owns and nobody else can write is loaded: its bytes become code. (No uid on Windows
 * or where process.getuid is missing: the file's directory permissions are all there is.)
 */
function trusted(st: { uid: number; mode: number }): boolean {
  if (typeof process.getuid !== 'function') return true;
  return st.uid === process.getuid() && (st.mode & 0o022) === 0;
}

/** Reads exactly b.length bytes at `position`; false at end of file. */
function readFully(fd: number, b: Uint8Array, position: number): boolean {
  let n = 0;
  while (n < b.length) {
    const r = fs().readSync(fd, b, n, b.length - n, position + n);
    if (r === 0) return false;
    n += r;
  }
  return true;
}

/**
 * The V8 data in a cache file, or undefined: missing, not a regular file, not this user's or writable by others
 * (its bytes become code), empty or too large. One read into one buffer. Never throws.
 */
export function readCache(file: string): Buffer | undefined {
  let fd: number | undefined;
  try {
    fd = fs().openSync(file, 'r');
    const st = fs().fstatSync(fd);
    if (!st.isFile() || !trusted(st) || st.size === 0 || st.size > MAX_BYTES) return undefined;
    const all = Buffer.allocUnsafe(st.size);
    return readFully(fd, all, 0) ? all : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs().closeSync(fd);
  }
}

/** The directory above `dir`'s parent: `$HOME` for `$HOME/.cache/claw-edge`. */
const grandparent = (dir: string) => dir.replace(/[\\/]+$/, '').replace(/[\\/][^\\/]*$/, '').replace(/[\\/][^\\/]*$/, '') || '/';

/**
 * Writes `data` as `dir`/`name` atomically (temporary file + rename, mode 0600, directory 0700). Returns whether it was written; never throws (a read-only or full disk only
 * costs the next start its cache). The directory is created with at most its parent (`~/.cache`), never
 * deeper: a service account whose HOME does not exist (HOME=/nonexistent) gets no directories made up for it.
 */
export function writeCache(dir: string, name: string, data: Uint8Array): boolean {
  const file = `${dir}/${name}`;
  // pid + a random part, created exclusively: two containers sharing a cache directory can have the same pid,
  // and a name planted in a shared directory is never followed.
  const tmp = `${file}.${process.pid}-${Math.random().toString(36).slice(2, 10)}.tmp`;
  try {
    if (!fs().statSync(grandparent(dir)).isDirectory()) return false;
    fs().mkdirSync(dir, { recursive: true, mode: 0o700 });
    fs().writeFileSync(tmp, data, { mode: 0o600, flag: 'wx' });
    fs().renameSync(tmp, file);
  } catch {
    try {
      fs().unlinkSync(tmp);
    } catch {}
    return false;
  }
  return true;
}

/** A name cacheFileName() makes: only those are ever removed (CLAW_CACHE_DIR may point at a shared directory). */
const OURS = /^[\w.-]+-[0-9a-f]{8}-[a-z_]{1,16}-v\d+\.\d+\.\d+[\w.-]*-[\w]+-[0-9a-f]{8}\.v8cache$/;

/** Keeps the newest KEEP_FILES cache files: every build and Node upgrade leaves files behind otherwise. */
export function trimCache(dir: string): void {
  try {
    const files = fs().readdirSync(dir).filter((n) => OURS.test(n));
    if (files.length <= KEEP_FILES) return;
    const aged = files.map((n) => ({ n, t: fs().statSync(`${dir}/${n}`).mtimeMs })).sort((a, b) => b.t - a.t);
    for (const { n } of aged.slice(KEEP_FILES)) fs().unlinkSync(`${dir}/${n}`);
  } catch {}
}

/**
 * Collects the chunks compiled without a usable cache and writes their caches: `delayMs` after the first of a
 * batch was compiled (a long-running `claw run` that is later killed still leaves them; a chunk a session
 * needs an hour later starts a batch of its own), or at a clean exit (code 0) if that comes first, so a failed
 * start never becomes the cache. `create` runs then, not when the chunk is compiled: V8 includes every function
 * compiled so far (start-up, the first requests).
 */
export function cacheWriter(dir: string, delayMs = 5000): (name: string, create: () => Uint8Array) => void {
  const pending: [string, () => Uint8Array][] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  let hooked = false;
  const save = () => {
    clearTimeout(timer);
    timer = undefined;
    for (const [name, create] of pending.splice(0)) {
      try {
        writeCache(dir, name, create());
      } catch {}
    }
    trimCache(dir);
  };
  const onExit = (code: number) => {
    if (code === 0) save();
  };
  return (name, create) => {
    pending.push([name, create]);
    if (timer) return;
    timer = setTimeout(save, delayMs);
    timer.unref?.();
    if (!hooked) process.once('exit', onExit);
    hooked = true;
  };
}
