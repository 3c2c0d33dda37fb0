// The directory layout and file naming of the filesystem transport (runtime profile §6.3,
// docs/transports.md). Everything here is pure apart from the atomic writer.
import { closeSync, fchmodSync, fdatasync, fsync as fsyncCb, fsyncSync, openSync, renameSync, writeSync, unlinkSync } from 'node:fs';

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
  const tmp = `${dir}/${name}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    // Exactly `mode`, whatever the umask: containers under different uids share files through a group.
    if (mode !== 0o600) fchmodSync(fd, mode);
    writeSync(fd, text);
    if (fsync) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameOrDrop(tmp, `${dir}/${name}`);
}

/**
 * writeAtomic for the stored answer, durable against power loss when `fsync`: data (fdatasync), then
 * the rename (the directory's fsync). Only the syncs leave the event loop; the write and rename are
 * page-cache work.
 */
export async function writeAtomicAsync(dir: string, name: string, text: string, fsync: boolean): Promise<void> {
  if (!fsync) return writeAtomic(dir, name, text, false);
  const tmp = `${dir}/${name}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, text);
    await new Promise<void>((resolve, reject) => fdatasync(fd, (e) => (e ? reject(e) : resolve())));
  } finally {
    closeSync(fd);
  }
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
    fd = openSync(dir, 'r');
  } catch {
    return;
  }
  await new Promise<void>((resolve) => fsyncCb(fd, () => resolve()));
  closeSync(fd);
}

export function fsyncDirSync(dir: string): void {
  try {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {}
}
