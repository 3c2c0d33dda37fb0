// The private run directory each sandboxed process gets (its TMPDIR; its cwd when the filesystem mode
// says so). A directory the tool left empty is kept and handed to the next run instead of being
// removed and created again: on ext4 here a mkdir + rmdir pair costs 0.7-2 ms per call (a journal
// commit each; on an SD card, two metadata writes of flash wear per tool call), while checking that a
// directory is empty is a read. A directory that is not empty, or whose mode or
// owner changed, is removed as before and never reused. Idle directories go when the session ends
// (drainRunDirs) or the process exits; a runtime killed mid-call leaves them to the next start's sweep
// (launch.ts removeStaleRunDirs: the pid in their name is gone).
import { lstatSync, mkdtempSync, readdirSync, rmdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { resolve } from 'node:path';

/** Empty directories kept per tmp root; a burst of concurrent calls beyond this creates and removes its own. */
const MAX_IDLE = 4;

const idle = new Map<string, string[]>();
let exitHook = false;

/** A private, empty directory under `root` (mode 0700, ours). */
export function takeRunDir(root: string): string {
  const dir = idle.get(root)?.pop();
  return dir ?? mkdtempSync(resolve(root, `claw-run-${process.pid}-`));
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
      if (!exitHook) {
        exitHook = true;
        process.once('exit', drainRunDirs);
      }
      return;
    }
  }
  await removeDir(dir);
}

/** Remove every idle directory (the session ended, or the process exits): each is empty, one rmdir. */
export function drainRunDirs(): void {
  for (const dir of [...idle.values()].flat()) {
    try {
      rmdirSync(dir);
    } catch {
      // the next start's sweep removes it
    }
  }
  idle.clear();
}

function reusable(dir: string): boolean {
  try {
    const st = lstatSync(dir);
    const uid = typeof process.getuid === 'function' ? process.getuid() : st.uid;
    return st.isDirectory() && (st.mode & 0o777) === 0o700 && st.uid === uid && readdirSync(dir).length === 0;
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
