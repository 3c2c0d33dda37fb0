// What each tool run started, on disk, so that a runtime killed in the middle of a call (SIGKILL, the
// OOM killer) leaves nothing running once it starts again (orphans.ts sweeps at the next start).
// Without bubblewrap nothing ties a tool's processes to the runtime's life: Node cannot make itself a
// child subreaper (prctl PR_SET_CHILD_SUBREAPER) nor set a parent-death signal on its children, and
// a setsid() descendant leaves the process group. Under bubblewrap no record is written:
// `--die-with-parent --unshare-pid` takes the whole pid namespace down with the runtime.
//
// Layout, under <data_dir>/sandbox-runs/:
//   <boot>-<pid>-<start>/       one directory per runtime process: the first 8 hex digits of the boot
//                               id, the runtime's pid and its start time (clock ticks after boot), so
//                               a live runtime sharing the data directory is recognised and left alone
//     p<pid>.<start>            a run without a cgroup: the spawned process, whose pid is also its
//                               process group and session id (spawned detached, setsid)
//     c<run-name>               a run in the cgroup <cgroup-base>/<run-name>
//     cgroup-base               the runtime's cgroup base directory, written with its first c-record
// Records are empty files: the name is the whole record, so a call adds one directory entry (14-40
// bytes of name, no data block) that is created before the tool runs and unlinked once it is reaped.
import { closeSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, rmdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { readProc } from './proc-table.ts';

export interface Owner {
  /** First 8 hex digits of /proc/sys/kernel/random/boot_id: start times count from this boot. */
  boot: string;
  pid: number;
  start: number;
}

export type RunRecord = { kind: 'process'; pid: number; start: number } | { kind: 'cgroup'; name: string };

const OWNER = /^([0-9a-f]{8})-(\d{1,10})-(\d{1,20})$/;
const PROCESS = /^p(\d{1,10})\.(\d{1,20})$/;
// Our own cgroup names only (cgroup.ts createRunCgroup): no separator, no `..`, nothing else.
const CGROUP = /^c(run-\d{1,10}-\d{1,10}-[0-9a-z]{1,12})$/;
export const CGROUP_BASE_FILE = 'cgroup-base';

export const ownerDirName = (o: Owner): string => `${o.boot}-${o.pid}-${o.start}`;

export function parseOwnerDirName(n: string): Owner | undefined {
  const m = OWNER.exec(n);
  return m ? { boot: m[1], pid: Number(m[2]), start: Number(m[3]) } : undefined;
}

export const recordName = (r: RunRecord): string => (r.kind === 'process' ? `p${r.pid}.${r.start}` : `c${r.name}`);

export function parseRecordName(n: string): RunRecord | undefined {
  const p = PROCESS.exec(n);
  if (p) return { kind: 'process', pid: Number(p[1]), start: Number(p[2]) };
  const c = CGROUP.exec(n);
  return c ? { kind: 'cgroup', name: c[1] } : undefined;
}

export function bootTag(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').replace(/-/g, '').slice(0, 8);
  } catch {
    return '00000000';
  }
}

let self: Owner | undefined;
/** This process as a record owner (read once). */
export function currentOwner(): Owner {
  self ??= { boot: bootTag(), pid: process.pid, start: readProc('self')?.start ?? 0 };
  return self;
}

export interface RunRecords {
  /** `<data_dir>/sandbox-runs`. */
  root: string;
  /**
   * Record a run before its tool may start. Returns the function that removes the record once the
   * run is reaped, or undefined when it could not be written (full or read-only disk: the run goes
   * ahead unrecorded — the record only serves a crash of the runtime itself).
   */
  add(r: RunRecord, cgroupBase?: string): (() => void) | undefined;
}

/** Owner directories made by this process, removed at a clean exit (one hook for all of them). */
const madeDirs = new Map<string, { base?: string }>();
function removeMadeDirs(): void {
  for (const [dir, m] of madeDirs) {
    try {
      if (m.base !== undefined) unlinkSync(join(dir, CGROUP_BASE_FILE));
      rmdirSync(dir);
    } catch {
      // not empty (records of runs still alive), or gone: the next start's sweep decides
    }
  }
  madeDirs.clear();
}

/** Records of this runtime under `root`; the owner directory is made on the first record. */
export function runRecords(root: string, owner: Owner = currentOwner()): RunRecords {
  const dir = join(root, ownerDirName(owner));
  const make = () => {
    let m = madeDirs.get(dir);
    if (!m) {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      if (madeDirs.size === 0) process.once('exit', removeMadeDirs);
      madeDirs.set(dir, (m = {}));
    }
    return m;
  };
  return {
    root,
    add(r, cgroupBase) {
      try {
        const m = make();
        if (r.kind === 'cgroup') {
          if (m.base === undefined && cgroupBase) {
            writeFileSync(join(dir, CGROUP_BASE_FILE), cgroupBase, { mode: 0o600 });
            m.base = cgroupBase;
          }
          if (m.base !== cgroupBase) return undefined; // one cgroup base per runtime process (cgroup.ts)
        }
        const file = join(dir, recordName(r));
        closeSync(openSync(file, 'w', 0o600));
        return () => {
          try {
            unlinkSync(file);
          } catch {
            // gone already
          }
        };
      } catch {
        return undefined;
      }
    },
  };
}

export interface OwnerRecords {
  owner: Owner;
  dir: string;
  records: RunRecord[];
  cgroupBase?: string;
  /** Entries that are not records (left alone by the sweep's checks, removed with the directory). */
  unknown: string[];
}

/**
 * Every owner directory under `root` that is a real directory of ours (not a symlink, our uid, not
 * writable by others): records in anything else are not trusted to name processes to kill.
 */
export function readRecords(root: string): OwnerRecords[] {
  const uid = typeof process.getuid === 'function' ? process.getuid() : -1;
  const out: OwnerRecords[] = [];
  for (const n of safeList(root)) {
    const owner = parseOwnerDirName(n);
    const dir = join(root, n);
    if (!owner) continue;
    try {
      const st = lstatSync(dir);
      if (!st.isDirectory() || (uid >= 0 && st.uid !== uid) || (st.mode & 0o022) !== 0) continue;
    } catch {
      continue;
    }
    const entry: OwnerRecords = { owner, dir, records: [], unknown: [] };
    for (const f of safeList(dir)) {
      if (f === CGROUP_BASE_FILE) {
        try {
          entry.cgroupBase = readFileSync(join(dir, f), 'utf8');
        } catch {
          // unreadable: its c-records cannot be followed
        }
        continue;
      }
      const r = parseRecordName(f);
      if (r) entry.records.push(r);
      else entry.unknown.push(f);
    }
    out.push(entry);
  }
  return out;
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** The cgroup directory a c-record names, given its owner's base. */
export const cgroupDirOf = (base: string, r: Extract<RunRecord, { kind: 'cgroup' }>): string => join(base, r.name);

/** Split a run cgroup's directory into the base and the record (the launcher's side). */
export function cgroupRecord(dir: string): { record: RunRecord; base: string } {
  return { record: { kind: 'cgroup', name: basename(dir) }, base: dirname(dir) };
}
