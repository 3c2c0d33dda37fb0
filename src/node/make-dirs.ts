// `mkdir -p` with a cause a board owner can act on. Node's recursive mkdir answers ENOENT ("no such file or
// directory", for the very directory it was asked to create) when a missing parent cannot be created because the
// filesystem is read-only: a read-only root, `ProtectSystem=strict` without a state directory, an SD card the
// kernel remounted read-only after errors. The nearest existing ancestor is checked for write access, and its
// error (EROFS, EACCES) is the one reported.
import { accessSync, constants, existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { ClawError } from '../protocol/errors.ts';

const WHY: Record<string, string> = {
  EROFS: 'is on a read-only filesystem',
  EACCES: 'is not writable by this user',
  EPERM: 'is not writable by this user',
  ENOSPC: 'is on a full filesystem',
  ENOTDIR: 'is not a directory',
};

export class MakeDirsError extends ClawError {
  constructor(
    readonly dir: string,
    /** The errno code of the real cause (EROFS rather than mkdir's ENOENT). */
    readonly errno: string,
    /** Where the cause is: `dir`, or its nearest existing ancestor. */
    readonly at: string,
    cause: unknown,
  ) {
    const why = WHY[errno];
    super('fs.mkdir', `cannot create directory ${dir}: ${errno}${at !== dir || why ? ` (${at} ${why ?? 'refused it'})` : ''}`, { cause });
  }
}

export interface MakeDirsFs {
  mkdirSync(path: string, opts: { recursive: true; mode: number }): unknown;
  existsSync(path: string): boolean;
  /** Throws (with `code`) when `path` is not writable. */
  accessWritable(path: string): void;
}

const nodeFs: MakeDirsFs = {
  mkdirSync: (p, o) => mkdirSync(p, o),
  existsSync,
  accessWritable: (p) => accessSync(p, constants.W_OK),
};

/** Creates `dir` and its missing parents (`mode` for the new ones); a failure is a MakeDirsError naming the real cause. */
export function makeDirs(dir: string, mode = 0o700, fs: MakeDirsFs = nodeFs): void {
  try {
    fs.mkdirSync(dir, { recursive: true, mode });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? 'EIO';
    if (code !== 'ENOENT') throw new MakeDirsError(dir, code, dir, e);
    let at = dirname(dir);
    while (!fs.existsSync(at) && dirname(at) !== at) at = dirname(at);
    try {
      fs.accessWritable(at);
    } catch (a) {
      throw new MakeDirsError(dir, (a as NodeJS.ErrnoException).code ?? code, at, e);
    }
    throw new MakeDirsError(dir, code, dir, e);
  }
}
