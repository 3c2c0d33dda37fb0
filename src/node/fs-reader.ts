// SourceReader over node:fs (and fetch for http registries): the one reader for every file the runtime loads
// as configuration (manifests, referenced primitives, glob matches, claw.runtime.yaml, secrets files, identity
// context files).
// Synchronous reads behind the async interface: what this reads is small (capped below), mostly at start-up,
// and fs/promises' readFile goes to the thread pool four times (open, fstat, read, close), each a turn of the
// event loop: ~1 ms of wall time per file on the start path. docs/startup.md.
//
// A path can name something that is not a file: /dev/zero and /dev/urandom never end, a FIFO without a writer
// blocks open() and read() forever, a directory cannot be read. So a file is opened with O_NONBLOCK (opening a
// FIFO then returns at once), the open descriptor is fstat'ed (what was opened, not what the path named a moment
// before), anything but a regular file is refused, and at most cap+1 bytes are read, so an oversized file is
// refused without being held in memory. docs/manifest.md "What the loader reads".
import { closeSync, constants, fstatSync, openSync, readdirSync, readlinkSync, readSync, realpathSync, statSync } from 'node:fs';
import { ClawError } from '../protocol/errors.ts';
import { MAX_SOURCE_BYTES } from '../manifest/source.ts';
import { isInside, type ReadOptions, type SourceReader } from '../manifest/reader.ts';
import { readResponsePrefix } from './response-prefix.ts';

/** Read failures the loader words itself; `code` says which (ENOENT and other errno codes pass through). */
export type ReadRefusal = 'not-regular' | 'too-large' | 'outside';

const refuse = (code: ReadRefusal, message: string) => new ClawError(code, message);

/**
 * Bytes of the regular file at `path`, at most `maxBytes` (default MAX_SOURCE_BYTES). With `within`, the path
 * must resolve (symlinks followed) to a file inside that directory. Throws a ClawError (codes above) or the
 * errno error (ENOENT, EACCES ...); never blocks on a FIFO or device, never reads past the cap.
 */
export function readBounded(path: string, opts: ReadOptions = {}): Uint8Array {
  const cap = opts.maxBytes ?? MAX_SOURCE_BYTES;
  let target = path;
  let flags = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);
  let fd: number;
  if (opts.within !== undefined) {
    // Resolve every symlink now and open the resolved path without following a last one: a link inside the
    // directory that points outside it is refused like a path that says so.
    const root = realpathSync(opts.within);
    target = realpathSync(path);
    if (!isInside(target, root)) throw refuse('outside', `${path} resolves outside ${opts.within}`);
    flags |= constants.O_NOFOLLOW ?? 0;
    fd = openWithin(target, flags, root, path, opts.within);
  } else fd = openSync(target, flags);
  try {
    const st = fstatSync(fd);
    if (st.isDirectory()) throw Object.assign(new Error(`${path} is a directory`), { code: 'EISDIR' });
    if (!st.isFile()) throw refuse('not-regular', `${path} is not a regular file`);
    if (st.size > cap && !opts.truncate) throw refuse('too-large', `${path} is larger than ${cap} bytes`);
    // A regular file can still grow, or say size 0 and have content (/proc): read up to cap+1 whatever fstat said.
    const buf = new Uint8Array(Math.min(cap + 1, Math.max(st.size + 1, 4096)));
    let n = 0;
    let chunk = buf;
    for (;;) {
      if (n === chunk.length) {
        if (chunk.length > cap) break;
        const bigger = new Uint8Array(Math.min(cap + 1, chunk.length * 2));
        bigger.set(chunk);
        chunk = bigger;
      }
      const got = readSync(fd, chunk, n, chunk.length - n, null);
      if (got === 0) break;
      n += got;
    }
    if (n > cap) {
      if (!opts.truncate) throw refuse('too-large', `${path} is larger than ${cap} bytes`);
      n = cap;
    }
    return chunk.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

// Linux's O_PATH (not in fs.constants): names a file without opening it.
const O_PATH = process.platform === 'linux' ? 0o10000000 : 0;

/**
 * Open `target` (resolved, inside `root`) so that what is read is inside `root` too. Between the realpath and
 * the open a directory of the path can be swapped for a symlink to the outside (whoever can write inside the
 * root, an agent's workspace for one). On Linux the name is held with O_PATH, which opens nothing, the kernel's
 * own path for that handle (/proc/self/fd/<n>) is checked again, and only then is the file opened through the
 * handle: the inode checked is the inode read, and an outside device is never opened.
 */
function openWithin(target: string, flags: number, root: string, path: string, within: string): number {
  if (O_PATH === 0) return openSync(target, flags);
  let held: number;
  try {
    held = openSync(target, O_PATH | (constants.O_NOFOLLOW ?? 0));
  } catch (e) {
    if ((e as { code?: string }).code === 'EINVAL') return openSync(target, flags); // a kernel without O_PATH (< 2.6.39)
    throw e;
  }
  try {
    let now: string;
    try {
      now = readlinkSync(`/proc/self/fd/${held}`);
    } catch {
      return openSync(target, flags); // no /proc: the realpath check is all there is
    }
    if (!isInside(now, root)) throw refuse('outside', `${path} resolves outside ${within}`);
    const st = fstatSync(held);
    if (st.isSymbolicLink()) throw Object.assign(new Error(`${path}: a symbolic link appeared`), { code: 'ELOOP' });
    if (!st.isFile() && !st.isDirectory()) throw refuse('not-regular', `${path} is not a regular file`);
    return openSync(`/proc/self/fd/${held}`, flags & ~(constants.O_NOFOLLOW ?? 0));
  } finally {
    closeSync(held);
  }
}

/** readBounded as UTF-8 text (a BOM kept; the caller decides). */
export function readBoundedText(path: string, opts: ReadOptions = {}): string {
  return new TextDecoder().decode(readBounded(path, opts));
}

/** A registry's answer, read up to the same cap as a file (a registry is a URL the runtime config names). */
async function fetchBounded(url: string, cap: number): Promise<Uint8Array | undefined> {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  if (res.status === 404) return undefined;
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > cap) {
    await res.body?.cancel();
    throw new Error(`answer is larger than ${cap} bytes`);
  }
  const { bytes, truncated } = await readResponsePrefix(res, cap);
  if (truncated) throw new Error(`answer is larger than ${cap} bytes`);
  return bytes;
}

export function createFsReader(): SourceReader {
  return {
    async read(path, opts) {
      return readBounded(path, opts);
    },
    // throwIfNoEntry: a missing path answers undefined instead of throwing; any other state (a directory, no
    // permission to stat) says true and lets read() report what is wrong.
    exists(path) {
      try {
        return statSync(path, { throwIfNoEntry: false }) !== undefined;
      } catch {
        return true;
      }
    },
    async list(dir) {
      try {
        const entries = readdirSync(dir, { withFileTypes: true });
        return entries.map((e) => ({ name: e.name, dir: e.isDirectory() }));
      } catch {
        return [];
      }
    },
    async fetch(url) {
      return fetchBounded(url, MAX_SOURCE_BYTES);
    },
  };
}
