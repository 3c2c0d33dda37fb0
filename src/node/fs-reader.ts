// SourceReader over node:fs (and fetch for http registries).
// Synchronous reads behind the async interface: what this reads (manifests, primitive files, the runtime
// configuration, mostly at start-up) is small, and fs/promises' readFile goes to the thread pool four times
// (open, fstat, read, close), each a turn of the event loop: ~1 ms of wall time per file on the start path,
// twice before the first reply (claw.runtime.yaml lookup, the manifest). Errors are the same (ENOENT, EISDIR
// ...), as rejections. docs/startup.md.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import type { SourceReader } from '../manifest/reader.ts';

export function createFsReader(): SourceReader {
  return {
    async read(path) {
      return new Uint8Array(readFileSync(path));
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
      const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
      if (res.status === 404) return undefined;
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      return new Uint8Array(await res.arrayBuffer());
    },
  };
}
