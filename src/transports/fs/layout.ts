// The directory layout and file naming of the filesystem transport (runtime profile §6.3,
// docs/transports.md). Everything here is pure apart from the file I/O helpers at the end.
//
// A peer sharing only this directory is untrusted (docs/security.md): it may plant symlinks, FIFOs or
// directories under any name. So every file is created fresh (O_EXCL|O_NOFOLLOW, a random `.tmp` name),
// every directory written or renamed into is lstat'ed to be a real directory, and every file read is
// opened O_NOFOLLOW|O_NONBLOCK and fstat'ed to be a regular file before one byte is read. Node has no
// openat/renameat, so a peer swapping a directory for a symlink between the check and the use can still
// win that race (docs/transports.md "untrusted peers").
import { closeSync, constants as C, fchmodSync, fdatasync, fstatSync, fsync as fsyncCb, fsyncSync, lstatSync, openSync, readSync, renameSync, writeSync, unlinkSync } from 'node:fs';
import { nodeCrypto } from '../../node/lazy.ts';
import { writeFully } from '../../node/write-fully.ts';

/** Whole or a throw (src/node/write-fully.ts): a short write renamed into place would read as a complete file. */
const nodeWrite = { writeSync };

export const DIRS = {
  inbox: 'inbox',
  outbox: 'outbox',
  archive: 'archive',
  rejected: 'rejected',
  notifications: 'notifications',
  /** Requests taken from the inbox and not yet answered (the claim: a rename, atomic). */
  processing: '.state/processing',
  /** One record per answered request_id: the stored reply a re-delivery gets. */
  answered: '.state/answered',
} as const;

/** A request_id usable as a file name component on every filesystem: no separators, no leading dot. */
export const REQUEST_ID = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
/** `{timestamp_ns}-{request_id}.json` (profile §6.3). The timestamp is digits, so the first `-` splits. */
const FILE_NAME = /^(\d{1,30})-([A-Za-z0-9_][A-Za-z0-9_.-]{0,127})\.json$/;
/** reply_to names a subdirectory of outbox/: same alphabet as a request_id. */
export const REPLY_TO = REQUEST_ID;

export function parseFileName(name: string): { ts: string; requestId: string } | undefined {
  const m = FILE_NAME.exec(name);
  return m ? { ts: m[1], requestId: m[2] } : undefined;
}

let lastNs = 0n;
/**
 * Wall-clock nanoseconds, zero-padded to 19 digits so name order is time order, and strictly
 * increasing within a process so one writer's files sort in the order it wrote them.
 */
export function timestampNs(nowMs: number = Date.now()): string {
  let ns = BigInt(Math.floor(nowMs)) * 1_000_000n;
  if (ns <= lastNs) ns = lastNs + 1n;
  lastNs = ns;
  return ns.toString().padStart(19, '0');
}

export function fileName(ts: string, requestId: string): string {
  return `${ts}-${requestId}.json`;
}

/**
 * Write `text` to `dir/name` so no reader ever sees a partial file: `name.tmp` first (readers skip
 * `*.tmp`), optionally fsynced, then renamed into place (profile §6.3).
 */
export function writeAtomic(dir: string, name: string, text: string, fsync: boolean, mode = 0o600): void {
  const tmp = tmpName(dir, name);
  const fd = openSync(tmp, CREATE, 0o600);
  try {
    // Exactly `mode`, whatever the umask: containers under different uids share files through a group.
    if (mode !== 0o600) fchmodSync(fd, mode);
    writeFully(nodeWrite, fd, Buffer.from(text), 0);
    if (fsync) fsyncSync(fd);
  } catch (e) {
    dropTmp(fd, tmp);
    throw e;
  }
  closeSync(fd);
  renameOrDrop(tmp, `${dir}/${name}`);
}

/** A failed write's temporary file goes: left behind, each one holds disk space and an inode (a presence file every interval). */
function dropTmp(fd: number, tmp: string): void {
  try {
    closeSync(fd);
  } catch {}
  try {
    unlinkSync(tmp);
  } catch {}
}

/**
 * writeAtomic for the stored answer, durable against power loss when `fsync`: data (fdatasync), then
 * the rename (the directory's fsync). Only the syncs leave the event loop; the write and rename are
 * page-cache work.
 */
export async function writeAtomicAsync(dir: string, name: string, text: string, fsync: boolean): Promise<void> {
  if (!fsync) return writeAtomic(dir, name, text, false);
  const tmp = tmpName(dir, name);
  const fd = openSync(tmp, CREATE, 0o600);
  try {
    writeFully(nodeWrite, fd, Buffer.from(text), 0);
    await new Promise<void>((resolve, reject) => fdatasync(fd, (e) => (e ? reject(e) : resolve())));
  } catch (e) {
    dropTmp(fd, tmp);
    throw e;
  }
  closeSync(fd);
  renameOrDrop(tmp, `${dir}/${name}`);
  await fsyncDir(dir);
}

function renameOrDrop(tmp: string, to: string): void {
  try {
    renameSync(tmp, to);
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {}
    throw e;
  }
}

/** fsync a directory so renames into and out of it survive power loss (a process crash needs nothing). */
export async function fsyncDir(dir: string): Promise<void> {
  let fd: number;
  try {
    fd = openSync(dir, DIR_FLAGS);
  } catch {
    return;
  }
  await new Promise<void>((resolve) => fsyncCb(fd, () => resolve()));
  closeSync(fd);
}

export function fsyncDirSync(dir: string): void {
  try {
    const fd = openSync(dir, DIR_FLAGS);
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {}
}

/** Create only, never through a link: a planted name (symlink or not) makes the open fail. */
const CREATE = C.O_WRONLY | C.O_CREAT | C.O_EXCL | (C.O_NOFOLLOW ?? 0);
/** Never blocks (a FIFO opens at once) and never follows a symlink (ELOOP). */
const READ = C.O_RDONLY | (C.O_NOFOLLOW ?? 0) | (C.O_NONBLOCK ?? 0);
const DIR_FLAGS = READ | (C.O_DIRECTORY ?? 0);

/** A temporary name a peer cannot guess in advance (it could only plant it in a race it cannot aim). */
const tmpName = (dir: string, name: string) => `${dir}/${name}.${nodeCrypto().randomBytes(6).toString('hex')}.tmp`;

/**
 * Throws unless each of `root/a`, `root/a/b`, … of `sub` is a real directory (lstat: a symlink is not one),
 * so a write or rename into `root/sub` stays inside `root`.
 */
export function assertRealDir(root: string, sub: string): void {
  let at = root;
  for (const part of sub.split('/')) {
    at += `/${part}`;
    if (!lstatSync(at).isDirectory()) throw Object.assign(new Error(`${at} is not a directory (a symlink?): refused`), { code: 'ENOTDIR' });
  }
}

/**
 * The bytes of a regular file, at most `cap` of them: `{ over }` when it holds more (read up to cap + 1,
 * so a file that lies about its size, or grows, is still cut off). Throws ELOOP for a symlink and
 * ENOTREG for anything else (FIFO, device, directory, socket, a second hard link), unread.
 */
export function readRegular(file: string, cap = Infinity): Buffer | { over: number } {
  const fd = openSync(file, READ);
  try {
    const st = fstatSync(fd);
    // A second link means the name may be a host file's other name: refused like a symlink.
    if (!st.isFile() || st.nlink > 1) throw Object.assign(new Error(`${file} is not a regular file: refused unread`), { code: 'ENOTREG' });
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buf = Buffer.allocUnsafe(Math.min(Math.max(st.size + 1, 65536), cap + 1 - total, 1 << 24));
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      chunks.push(buf.subarray(0, n));
      total += n;
      if (total > cap) return { over: Math.max(total, st.size) };
    }
    return Buffer.concat(chunks, total);
  } finally {
    closeSync(fd);
  }
}
