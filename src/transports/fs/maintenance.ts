// Housekeeping of the filesystem transport's directories (docs/transports.md "retention"):
// a crashed writer's `.tmp` files, archived and rejected requests, replies nobody collected,
// answered request_ids past the dedup retention, notifications beyond the kept number.
import { lstatSync, readdirSync, unlinkSync } from 'node:fs';
import type { Logger } from '../../kernel/ports.ts';
import { DIRS, parseFileName } from './layout.ts';
import type { ResolvedFsOptions } from './options.ts';

/**
 * `ageOf` turns a file's time (from its name, else its mtime) into its age: the transport's WallAges
 * (src/kernel/wall-age.ts), so a file written minutes before the wall clock stepped years forward is
 * minutes old, not years (docs/boards.md "Clock").
 */
export function sweep(root: string, opt: ResolvedFsOptions, ageOf: (stampMs: number) => number, log: Logger): number {
  let removed = 0;
  const each = (dir: string, fn: (name: string, file: string, mtimeMs: number, isDir: boolean) => void) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      const file = `${dir}/${name}`;
      // A transport file's name carries its time: no stat per file (archive/ can hold a day of traffic).
      const p = parseFileName(name);
      if (p) {
        fn(name, file, Number(BigInt(p.ts) / 1_000_000n), false);
        continue;
      }
      try {
        // lstat: a peer's symlink to a host directory is removed as a link, never swept through.
        const st = lstatSync(file);
        fn(name, file, st.mtimeMs, st.isDirectory());
      } catch {}
    }
  };
  const rm = (file: string) => {
    try {
      unlinkSync(file);
      removed++;
    } catch {}
  };
  const old = (mtimeMs: number, age: number) => ageOf(mtimeMs) > age;

  // Leftover `.tmp` files: a writer (or this runtime) died between write and rename.
  const tmpDirs = [DIRS.inbox, DIRS.answered, DIRS.notifications, DIRS.outbox].map((s) => `${root}/${s}`);
  each(`${root}/${DIRS.outbox}`, (_n, file, _m, isDir) => isDir && tmpDirs.push(file));
  for (const dir of tmpDirs) {
    each(dir, (name, file, mtimeMs, isDir) => {
      if (isDir) return;
      if (name.endsWith('.tmp')) {
        if (old(mtimeMs, opt.tmp_max_age_ms)) {
          rm(file);
          log.info('fs transport: removed a stale .tmp file', { file });
        }
      } else if (dir.startsWith(`${root}/${DIRS.outbox}`) && old(mtimeMs, opt.retention_ms)) rm(file); // replies never collected
    });
  }
  for (const sub of [DIRS.archive, DIRS.rejected]) {
    each(`${root}/${sub}`, (_n, file, mtimeMs, isDir) => !isDir && old(mtimeMs, opt.retention_ms) && rm(file));
  }
  each(`${root}/${DIRS.answered}`, (name, file, mtimeMs) => name.endsWith('.json') && old(mtimeMs, opt.dedup_retention_ms) && rm(file));
  let notes: string[] = [];
  try {
    notes = readdirSync(`${root}/${DIRS.notifications}`).filter((n) => n.endsWith('.json')).sort();
  } catch {}
  for (const name of notes.slice(0, Math.max(0, notes.length - opt.notifications_keep))) rm(`${root}/${DIRS.notifications}/${name}`);
  return removed;
}
