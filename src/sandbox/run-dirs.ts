// The private run directory each sandboxed process gets (its TMPDIR; its cwd when the filesystem mode
// says so). A directory the tool left empty is kept and handed to the next run instead of being
// removed and created again: on ext4 here a mkdir + rmdir pair costs 0.7-2 ms per call (a journal
// commit each; on an SD card, two metadata writes of flash wear per tool call), while checking that a
// directory is empty is a read. A directory that is not empty, or whose mode or
// owner changed, is removed as before and never reused. Idle directories go when the session ends
// (drainRunDirs) or the process exits; a runtime killed mid-call leaves them to the next start's sweep
// (launch.ts removeStaleRunDirs: the pid in their name is gone).
//
// Every private directory of this process, run dirs and file-mount secret dirs alike, lives in one 0700
// parent per tmp root, `claw-private-<pid>-n<pid namespace>-XXXXXX`. The tool runs under our uid, so modes do not keep one call out
// of another's directory; what does is that bubblewrap covers that parent wherever a bind would show it
// and mounts the call's own two directories back (bwrap-args.ts hideOtherRuns). One parent, covered once,
// also hides the directories of calls that start after the tool did.
import { lstatSync, mkdtempSync, readdirSync, readlinkSync, rmdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { resolve } from 'node:path';

/** Empty directories kept per tmp root; a burst of concurrent calls beyond this creates and removes its own. */
const MAX_IDLE = 4;

const idle = new Map<string, string[]>();
/** The parent of this process's private directories, per tmp root. */
const parents = new Map<string, string>();
let exitHook = false;

/**
 * Names of the private directories of any claw runtime in a tmp root (this layout and the older one), with the
 * owner's pid and, where the name carries it, the inode of the owner's pid namespace (`n<inode>-`).
 */
export const PRIVATE_DIR_NAME = /^claw-(?:private|run|secrets)-(\d+)-(?:n(\d+)-)?/;

let pidNamespace: string | undefined;

/**
 * The inode of this process's pid namespace ('' where /proc does not say). Containers with their own pid
 * namespaces may share one /tmp: a pid in a directory's name means something only in its owner's namespace,
 * so the stale sweep (launch.ts) judges only the names made in its own.
 */
export function ownPidNamespace(): string {
  if (pidNamespace === undefined) {
    try {
      pidNamespace = /\[(\d+)\]/.exec(readlinkSync('/proc/self/ns/pid'))?.[1] ?? '';
    } catch {
      pidNamespace = '';
    }
  }
  return pidNamespace;
}

/** The parent of this process's private directories in `root`, made (0700) when missing. */
export function privateParent(root: string): string {
  const known = parents.get(root);
  if (known && ours(known)) return known;
  // A parent that is no longer ours, 0700, is not used again: its idle run dirs go with it (handed out,
  // one would sit inside a parent the sandbox now covers as another runtime's, read-only), and so does
  // the parent once empty (its pid is alive, so no sweep would remove it).
  if (known) {
    for (const d of idle.get(root) ?? []) {
      try {
        rmdirSync(d);
      } catch {
        // the next start's sweep removes it
      }
    }
    idle.delete(root);
    try {
      rmdirSync(known);
    } catch {
      // still holds a running call's directory
    }
  }
  const ns = ownPidNamespace();
  const dir = mkdtempSync(resolve(root, `claw-private-${process.pid}-${ns ? `n${ns}-` : ''}`));
  parents.set(root, dir);
  if (!exitHook) {
    exitHook = true;
    process.once('exit', drainRunDirs);
  }
  return dir;
}

/** A private, empty directory under `root` (mode 0700, ours). */
export function takeRunDir(root: string): string {
  const parent = privateParent(root);
  const dir = idle.get(root)?.pop();
  return dir ?? mkdtempSync(resolve(parent, 'run-'));
}

/** A fresh directory (0700) for one call's file-mount secrets; made synchronously, so no drain removes the parent in between. */
export function takeSecretsDir(root: string): string {
  return mkdtempSync(resolve(privateParent(root), 'secrets-'));
}

/**
 * Give a run directory back once its process is gone: kept when `reuse` (the tool exited on its own:
 * nothing of it was killed, so nothing of it is left running) and it left the directory as it got it;
 * removed otherwise.
 */
export async function returnRunDir(root: string, dir: string, reuse: boolean): Promise<void> {
  if (reuse && reusable(dir)) {
    const list = idle.get(root) ?? [];
    if (list.length < MAX_IDLE) {
      list.push(dir);
      idle.set(root, list);
      return;
    }
  }
  await removeDir(dir);
  dropParentIfEmpty(root);
}

/**
 * The parent goes once it holds nothing (one rmdir, refused with ENOTEMPTY while any call of ours runs).
 * So it never outlives every call by more than the idle directories, and a tool that is still running
 * keeps the parent its sandbox covers: later calls are made inside it, never in a new, uncovered one.
 */
function dropParentIfEmpty(root: string): void {
  const dir = parents.get(root);
  if (!dir) return;
  try {
    rmdirSync(dir);
    parents.delete(root);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') parents.delete(root);
  }
}

/**
 * Remove every idle directory (the session ended, or the process exits): each is empty, one rmdir; then
 * each parent that is empty now. A parent still holding a call's directory stays (ENOTEMPTY).
 */
export function drainRunDirs(): void {
  for (const dir of [...idle.values()].flat()) {
    try {
      rmdirSync(dir);
    } catch {
      // the next start's sweep removes it
    }
  }
  idle.clear();
  for (const root of [...parents.keys()]) dropParentIfEmpty(root);
}

/** A directory of ours with mode 0700: not replaced by someone else, not opened up. */
function ours(dir: string): boolean {
  try {
    const st = lstatSync(dir);
    const uid = typeof process.getuid === 'function' ? process.getuid() : st.uid;
    return st.isDirectory() && (st.mode & 0o777) === 0o700 && st.uid === uid;
  } catch {
    return false;
  }
}

function reusable(dir: string): boolean {
  try {
    return ours(dir) && readdirSync(dir).length === 0;
  } catch {
    return false;
  }
}

/** One rmdir when empty; a tree is removed off the event loop. */
async function removeDir(dir: string): Promise<void> {
  try {
    rmdirSync(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}
