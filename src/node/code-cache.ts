// V8 code cache of the bundle's hot code (docs/startup.md). Used only by the boot loader (targets/boot.ts):
// dist/claw.mjs compiles its hot code with vm.Script, handing V8 the bytecode a previous start produced, so the
// functions that start-up runs are not parsed and compiled again.
//
// Why the data is stored twice: V8 checks a code cache's header (magic, V8 version, flags, source length,
// payload length) but, in release builds, not its payload; a flipped byte inside it crashes the process
// (measured on Node 20). A checksum would have to be computed before V8 sees the data, and on Node 20 every way
// of doing that costs more than the cache saves at this size: a JavaScript loop over 300 KB takes ~3 ms before
// it is optimised, node:zlib's crc32 ~2 ms and ~1.9 MB RSS just to load, node:v8 (to turn V8's own checksum
// on) ~1.7 ms and 1.6 MB, a WebAssembly hash 0.6-3 MB RSS for the engine. Comparing the two copies is a memcmp
// in 16 KB chunks (~0.1 ms, 16 KB of memory): any damage that does not hit both copies identically is caught.
// Files are written atomically (temporary file + rename) and only loaded when this user owns them and nobody
// else can write them, so a copy that is damaged twice alike has to be written on purpose by this user.
//
// File: "CLAWCC02" | u32 LE length n of the V8 data | u32 LE ~n | data | zero pad to 4 | data | zero pad to 4.
import { builtin } from './builtin.ts';

// node:fs through builtin(), not an ESM import (see builtin.ts).
const fs = () => builtin('node:fs');

const MAGIC = 'CLAWCC02';
const HEADER = 16;
const MAX_BYTES = 16 * 1024 * 1024;
const FNV_OFFSET = 0x811c9dc5 | 0;
const FNV_PRIME = 16777619;
/** Old cache files (other builds, other Node versions) beyond this many are removed when a new one is written. */
const KEEP_FILES = 24;

const pad4 = (n: number) => (n + 3) & ~3;

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
  buildId: string;
  command: string;
  nodeVersion: string;
  arch: string;
  /** Everything that changes V8's flags: process.execArgv and NODE_OPTIONS. */
  flags: string;
}

/**
 * One file per build, command, Node version, architecture and set of flags. V8 would reject a cache made
 * under other flags anyway; keying by them keeps two configurations from overwriting each other's cache.
 * Per command, because each command runs different code at start-up: a `claw --version` must not leave
 * `claw run` a cache of the module top levels only.
 */
export function cacheFileName(k: CacheKey): string {
  return `${k.buildId}-${k.command}-${k.nodeVersion}-${k.arch}-${hashText(k.flags)}.v8cache`;
}

/** The command word the cache is kept for (`run`, `validate`, ...), or undefined (flags, help, nothing). */
export function cacheCommand(argv: readonly string[]): string | undefined {
  const c = argv[2];
  return c !== undefined && /^[a-z_]{1,16}$/.test(c) ? c : undefined;
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
 * The whole of a file in the cache directory, or undefined: missing, not a regular file, not this user's or
 * writable by others (its bytes become code, or a manifest the runtime trusts), or of a size outside
 * (minBytes, maxBytes]. One read into one buffer. Never throws.
 */
export function readTrusted(file: string, minBytes: number, maxBytes: number): Buffer | undefined {
  let fd: number | undefined;
  try {
    fd = fs().openSync(file, 'r');
    const st = fs().fstatSync(fd);
    if (!st.isFile() || !trusted(st) || st.size <= minBytes || st.size > maxBytes) return undefined;
    const all = Buffer.allocUnsafe(st.size);
    return readFully(fd, all, 0) ? all : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs().closeSync(fd);
  }
}

/** The verified V8 data of a cache file, or undefined (missing, foreign, truncated, damaged): never throws. */
export function readCache(file: string): Uint8Array | undefined {
  // The whole file in one read and the second copy compared in one call: this runs on every start, and the
  // header read plus sixteen 16 KB reads of the second copy took ~0.8 ms against ~0.55 ms (BENCH.md "Start-up:
  // round 6"). The file is bounded by MAX_BYTES.
  const all = readTrusted(file, HEADER, MAX_BYTES);
  if (!all) return undefined;
  for (let i = 0; i < MAGIC.length; i++) if (all[i] !== MAGIC.charCodeAt(i)) return undefined;
  const len = all.readUInt32LE(8);
  const span = pad4(len);
  if (len === 0 || HEADER + 2 * span !== all.length || all.readUInt32LE(12) !== (~len >>> 0)) return undefined;
  if (all.compare(all, HEADER + span, HEADER + span + len, HEADER, HEADER + len) !== 0) return undefined;
  return all.subarray(HEADER, HEADER + len);
}

/** The bytes of a cache file for `data`. */
export function encodeCache(data: Uint8Array): Uint8Array {
  const span = pad4(data.length);
  const out = new Uint8Array(HEADER + 2 * span);
  for (let i = 0; i < MAGIC.length; i++) out[i] = MAGIC.charCodeAt(i);
  const view = new DataView(out.buffer);
  view.setUint32(8, data.length, true);
  view.setUint32(12, ~data.length >>> 0, true);
  out.set(data, HEADER);
  out.set(data, HEADER + span);
  return out;
}

/** The directory above `dir`'s parent: `$HOME` for `$HOME/.cache/claw-edge`. */
const grandparent = (dir: string) => dir.replace(/[\\/]+$/, '').replace(/[\\/][^\\/]*$/, '').replace(/[\\/][^\\/]*$/, '') || '/';

/**
 * Writes a cache file atomically (temporary file + rename, mode 0600, directory 0700), then trims old files.
 * Returns whether it was written; never throws (a read-only or full disk only costs the next start its cache).
 */
export function writeCache(dir: string, name: string, data: Uint8Array): boolean {
  return writeCacheFile(dir, name, encodeCache(data), OURS);
}

/**
 * Writes `bytes` as `dir`/`name` atomically (temporary file + rename, mode 0600, directory 0700), then keeps
 * the newest KEEP_FILES files whose names match `family`. Returns whether it was written; never throws. The
 * directory is created with at most its parent (`~/.cache`), never deeper: a service account whose HOME does
 * not exist (HOME=/nonexistent) gets no directories made up for it.
 */
export function writeCacheFile(dir: string, name: string, bytes: Uint8Array, family: RegExp): boolean {
  const file = `${dir}/${name}`;
  // pid + a random part, created exclusively: two containers sharing a cache directory can have the same pid,
  // and a name planted in a shared directory is never followed.
  const tmp = `${file}.${process.pid}-${Math.random().toString(36).slice(2, 10)}.tmp`;
  try {
    if (!fs().statSync(grandparent(dir)).isDirectory()) return false;
    fs().mkdirSync(dir, { recursive: true, mode: 0o700 });
    fs().writeFileSync(tmp, bytes, { mode: 0o600, flag: 'wx' });
    fs().renameSync(tmp, file);
  } catch {
    try {
      fs().unlinkSync(tmp);
    } catch {}
    return false;
  }
  trim(dir, family);
  return true;
}

/** A name cacheFileName() makes: only those are ever removed (CLAW_CACHE_DIR may point at a shared directory). */
const OURS = /^[0-9a-f]{16}-[a-z_]{1,16}-v\d+\.\d+\.\d+[\w.-]*-[\w]+-[0-9a-f]{8}\.v8cache$/;

/** Keeps the newest KEEP_FILES files of a family: every build and Node upgrade leaves files behind otherwise. */
function trim(dir: string, family: RegExp): void {
  try {
    const files = fs().readdirSync(dir).filter((n) => family.test(n));
    if (files.length <= KEEP_FILES) return;
    const aged = files.map((n) => ({ n, t: fs().statSync(`${dir}/${n}`).mtimeMs })).sort((a, b) => b.t - a.t);
    for (const { n } of aged.slice(KEEP_FILES)) fs().unlinkSync(`${dir}/${n}`);
  } catch {}
}

/**
 * Writes the cache once: `delayMs` after start-up (a long-running `claw run` that is later killed still leaves
 * one), or at a clean exit (code 0) if that comes first, so a failed start never becomes the cache. `create`
 * runs then, not now: V8 includes every function compiled so far (start-up, the first requests).
 */
export function saveLater(dir: string, name: string, create: () => Uint8Array | undefined, delayMs = 5000): void {
  let done = false;
  const save = () => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    process.removeListener('exit', onExit);
    try {
      const data = create();
      if (data) writeCache(dir, name, data);
    } catch {}
  };
  const onExit = (code: number) => {
    if (code === 0) save();
  };
  const timer = setTimeout(save, delayMs);
  timer.unref?.();
  process.once('exit', onExit);
}
