// The manifest cache's records as files beside the V8 code cache (src/manifest/load-cache.ts, docs/startup.md):
// `<build id>-manifest-<hash of the manifest path>.json`, written atomically with mode 0600 and read only when
// this user owns the file and nobody else can write it (a record is a manifest the runtime would trust, with
// its sandbox and policy). The newest 24 records are kept, like the code caches.
import type { ManifestCache } from '../manifest/load-cache.ts';
import { builtin } from './builtin.ts';
import { hashText, readTrusted, writeCacheFile } from './code-cache.ts';

const FAMILY = /^[0-9a-f]{16}-manifest-[0-9a-f]{8}\.json$/;
const MAX_RECORD_BYTES = 4 * 1024 * 1024;

/**
 * `onFirstRecord`: after this build's first record was written (none existed for this manifest nor for any other).
 * The boot loader then leaves no code cache from this start: it ran the YAML and schema code that later starts
 * skip, and V8 would cache all of it (BENCH.md "Start-up: round 6": 274 KB of cached code against 204 KB); the
 * next start, on the usual path, writes the cache. Only for the first record: a manifest that keeps changing, or
 * one at a new path on every start, still gets a code cache (from the second start on).
 */
export function manifestCache(dir: string, build: string, onFirstRecord?: () => void): ManifestCache {
  const file = (path: string) => `${build}-manifest-${hashText(path)}.json`;
  const had = new Set<string>();
  /** Whether `dir` holds a record of this build other than `name` (read on the miss path only). */
  const othersExist = (name: string) => {
    try {
      return builtin('node:fs')
        .readdirSync(dir)
        .some((n) => n !== name && n.startsWith(`${build}-manifest-`) && FAMILY.test(n));
    } catch {
      return false;
    }
  };
  return {
    build,
    store: {
      read: (path) => {
        const b = readTrusted(`${dir}/${file(path)}`, 0, MAX_RECORD_BYTES);
        if (b) had.add(path);
        return b;
      },
      write: (path, data) => {
        if (data.length > MAX_RECORD_BYTES || !writeCacheFile(dir, file(path), data, FAMILY)) return;
        if (!had.has(path) && !othersExist(file(path))) onFirstRecord?.();
      },
    },
  };
}
