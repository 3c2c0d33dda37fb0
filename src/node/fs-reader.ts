// SourceReader over node:fs (and fetch for http registries).
import { readFile, readdir } from 'node:fs/promises';
import type { SourceReader } from '../manifest/reader.ts';

export function createFsReader(): SourceReader {
  return {
    async read(path) {
      return new Uint8Array(await readFile(path));
    },
    async list(dir) {
      try {
        const entries = await readdir(dir, { withFileTypes: true });
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
