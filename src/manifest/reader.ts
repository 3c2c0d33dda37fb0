// The loader reads files only through this port, so it runs the same on Node, Bun and in tests.

export interface ReadOptions {
  /** Refuse a file larger than this many bytes (default: MAX_SOURCE_BYTES, src/manifest/source.ts). */
  maxBytes?: number;
  /**
   * The file must resolve inside this directory, symlinks followed: references from a manifest that came over
   * the wire (docs/manifest.md "Manifests sent over the wire").
   */
  within?: string;
  /** Give the first `maxBytes` bytes of a larger file instead of refusing it (a prompt file cut to size). */
  truncate?: boolean;
}

export interface SourceReader {
  /**
   * Bytes of a regular file, never more than the cap; rejects with `{ code }`: an errno code (ENOENT, EISDIR ...)
   * or 'not-regular' (a device, FIFO, socket), 'too-large', 'outside' (src/node/fs-reader.ts).
   */
  read(path: string, opts?: ReadOptions): Promise<Uint8Array>;
  /** Entries of a directory (names only) with whether each is a directory; [] when it does not exist. */
  list(dir: string): Promise<{ name: string; dir: boolean }[]>;
  /** Fetch a registry document over HTTP(S); undefined when the registry does not have it. */
  fetch?(url: string): Promise<Uint8Array | undefined>;
  /**
   * Whether a path may be read: false only when nothing is there. For optional files (claw.runtime.yaml beside the
   * manifest), so the usual case costs no thrown error (an ENOENT exception, ~0.1 ms with its stack, on every start).
   */
  exists?(path: string): boolean;
}

/** POSIX-style path helpers (manifests use `/` everywhere, as the spec's examples do). */
export function joinPath(base: string, rel: string): string {
  if (rel.startsWith('/')) return normalize(rel);
  return normalize(`${base}/${rel}`);
}

export function dirnameOf(p: string): string {
  const i = p.lastIndexOf('/');
  return i <= 0 ? (i === 0 ? '/' : '.') : p.slice(0, i);
}

export function normalize(p: string): string {
  const abs = p.startsWith('/');
  const out: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (out.length > 0 && out[out.length - 1] !== '..') out.pop();
      else if (!abs) out.push('..');
    } else out.push(seg);
  }
  const s = out.join('/');
  return abs ? `/${s}` : s === '' ? '.' : s;
}

/** Whether normalized absolute path `p` is `dir` or below it (lexically: no filesystem access). */
export function isInside(p: string, dir: string): boolean {
  const d = normalize(dir);
  const q = normalize(p);
  return q === d || q.startsWith(d === '/' ? '/' : `${d}/`);
}
