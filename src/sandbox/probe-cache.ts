// The sandbox layer probes (host.ts: bwrap twice, prlimit, unshare, two --version runs and bwrap --help) cost seven process
// spawns, tens to hundreds of ms, on every Level 2 start. Their answer depends on the binaries and on the kernel's
// user-namespace settings, which rarely change, so it is kept in the cache directory (the code cache's,
// src/node/code-cache.ts cacheDir) under a fingerprint of everything it depends on: each binary's path, size,
// mtime and inode, the kernel release, the uid, and the user-namespace sysctls. Any change re-probes; so does an
// entry older than a day (an AppArmor profile or a container runtime can change what works without touching
// any of these). A probe that timed out is never stored: a loaded machine must not pin "does not work".
// The cgroup probe (a mkdir, no process) runs live on every start: delegation changes with the service manager.
// Each record carries a hash of what it says: a bit flipped on a board's SD card can leave valid JSON of another
// shape (a start that then fails, for a day) or another binary path (every sandboxed tool run failing); a record
// whose hash does not match is a miss, and the probes run again.
import { readFileSync, statSync } from 'node:fs';
import { hashText, readCache, writeCache } from '../node/code-cache.ts';

export const PROBE_CACHE_FILE = 'sandbox-probes.json';
export const PROBE_CACHE_MAX_AGE_MS = 24 * 60 * 60 * 1000;
const FORMAT = 4; // changes whenever what a probe checks or a record holds changes: an answer to another question is not reused

/** Kernel settings that decide whether an unprivileged user namespace (bwrap --unshare-user) is allowed. */
const USERNS_SETTINGS = ['/proc/sys/kernel/unprivileged_userns_clone', '/proc/sys/user/max_user_namespaces', '/proc/sys/kernel/apparmor_restrict_unprivileged_userns'];

export interface FingerprintInputs {
  /** The probed binaries by name, as found on PATH (undefined: not found). */
  binaries: Record<string, string | undefined>;
  kernel: string;
  uid: number;
  /** Injectable for tests. */
  stat?: (path: string) => { size: number; mtimeMs: number; ino: number } | undefined;
  readSetting?: (path: string) => string | undefined;
}

/** One string naming everything the probe results depend on. */
export function probeFingerprint(i: FingerprintInputs): string {
  const stat = i.stat ?? statOf;
  const read = i.readSetting ?? settingOf;
  const bins = Object.keys(i.binaries)
    .sort()
    .map((name) => {
      const path = i.binaries[name];
      const st = path ? stat(path) : undefined;
      return [name, path ?? null, st ? [st.size, st.mtimeMs, st.ino] : null];
    });
  return JSON.stringify({ bins, kernel: i.kernel, uid: i.uid, userns: USERNS_SETTINGS.map((p) => read(p) ?? null) });
}

function statOf(path: string): { size: number; mtimeMs: number; ino: number } | undefined {
  try {
    const st = statSync(path);
    return { size: st.size, mtimeMs: st.mtimeMs, ino: st.ino };
  } catch {
    return undefined;
  }
}

function settingOf(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined;
  }
}

export interface ProbeCacheOptions<T> {
  /** The cache directory; undefined: no cache (probe every time). */
  dir: string | undefined;
  fingerprint: string;
  now: number;
  /** Whether a fresh result may be stored (false after a timeout). */
  storable: (result: T) => boolean;
}

/** The stored result for `fingerprint` if there is a fresh one (a file this user owns), else `probe()`'s, stored. */
export async function cachedProbe<T>(o: ProbeCacheOptions<T>, probe: () => Promise<T>): Promise<T> {
  if (o.dir === undefined) return probe();
  const stored = readStored<T>(`${o.dir}/${PROBE_CACHE_FILE}`);
  if (stored && stored.key === o.fingerprint && stored.at <= o.now && o.now - stored.at < PROBE_CACHE_MAX_AGE_MS) return stored.result;
  const result = await probe();
  if (o.storable(result)) writeCache(o.dir, PROBE_CACHE_FILE, new TextEncoder().encode(JSON.stringify({ v: FORMAT, key: o.fingerprint, at: o.now, result, check: recordHash(o.fingerprint, o.now, result) })));
  return result;
}

/** What a record's `check` holds: FNV-1a of its key, time and result as JSON (JSON.parse keeps key order, so a read-back record hashes alike). */
const recordHash = (key: string, at: number, result: unknown) => hashText(JSON.stringify([key, at, result]));

function readStored<T>(file: string): { key: string; at: number; result: T } | undefined {
  // readCache: only a regular file this user owns and nobody else can write.
  const bytes = readCache(file);
  if (!bytes) return undefined;
  try {
    const rec = JSON.parse(bytes.toString('utf8')) as { v?: unknown; key?: unknown; at?: unknown; result?: unknown; check?: unknown };
    if (rec.v !== FORMAT || typeof rec.key !== 'string' || typeof rec.at !== 'number' || typeof rec.result !== 'object' || rec.result === null) return undefined;
    if (rec.check !== recordHash(rec.key, rec.at, rec.result)) return undefined;
    return { key: rec.key, at: rec.at, result: rec.result as T };
  } catch {
    return undefined;
  }
}
