// Glob expansion for manifest references (spec §6: "Glob patterns MUST be expanded at load time").
// Supports `*`, `?`, `[...]` within one path segment and `**` for any depth. Results are sorted so
// generated names and policy order never depend on the filesystem's listing order.
import { joinPath, normalize, type SourceReader } from './reader.ts';
import { ClawError } from '../protocol/errors.ts';

export function isGlob(ref: string): boolean {
  return /[*?[]/.test(ref);
}

function segmentRegex(seg: string): RegExp {
  let re = '';
  for (let i = 0; i < seg.length; i++) {
    const ch = seg[i];
    if (ch === '*') re += '[^/]*';
    else if (ch === '?') re += '[^/]';
    else if (ch === '[') {
      const end = seg.indexOf(']', i + 1);
      if (end === -1) re += '\\[';
      else {
        const body = seg.slice(i + 1, end).replace(/^!/, '^').replace(/\\/g, '\\\\');
        re += `[${body}]`;
        i = end;
      }
    } else re += ch.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  // Hidden files are matched only by a pattern that starts with a dot, as in shells.
  return new RegExp(seg.startsWith('.') ? `^${re}$` : `^(?!\\.)${re}$`);
}

/**
 * Directories one glob may list. A `**` walk lists synchronously (src/node/fs-reader.ts), so a pattern over a
 * huge tree (a manifest sent over the wire into a runtime started in `/`) would hold the event loop for as long
 * as it runs; far more than any manifest directory holds.
 */
export const MAX_GLOB_LISTINGS = 10_000;

/** A glob that would list more than MAX_GLOB_LISTINGS directories. */
export class GlobTooWide extends ClawError {
  constructor(pattern: string) {
    super('glob-too-wide', `glob ${pattern} walks more than ${MAX_GLOB_LISTINGS} directories`);
  }
}

/** `baseDir` must be absolute; results are absolute, normalized and sorted. Throws GlobTooWide. */
export async function expandGlob(reader: SourceReader, baseDir: string, pattern: string, maxListings = MAX_GLOB_LISTINGS): Promise<string[]> {
  const abs = pattern.startsWith('/');
  const segs = pattern.split('/').filter((s) => s !== '' && s !== '.');
  const results = new Set<string>();
  let listings = 0;
  const list = (dir: string) => {
    if (++listings > maxListings) throw new GlobTooWide(pattern);
    return reader.list(dir);
  };
  const walk = async (dir: string, i: number): Promise<void> => {
    if (i === segs.length) {
      results.add(dir);
      return;
    }
    const seg = segs[i];
    if (seg === '**') {
      await walk(dir, i + 1);
      for (const e of await list(dir)) if (e.dir && !e.name.startsWith('.')) await walk(`${dir}/${e.name}`, i);
      return;
    }
    if (seg === '..') return walk(joinPath(dir, '..'), i + 1);
    const last = i === segs.length - 1;
    if (!isGlob(seg)) {
      // A literal segment must exist too (a file when last, a directory otherwise).
      if ((await list(dir)).some((e) => e.name === seg && e.dir === !last)) await walk(`${dir}/${seg}`, i + 1);
      return;
    }
    const re = segmentRegex(seg);
    for (const e of await list(dir)) {
      if (!re.test(e.name)) continue;
      if (last ? !e.dir : e.dir) await walk(`${dir}/${e.name}`, i + 1);
    }
  };
  await walk(abs ? '' : baseDir, 0);
  return [...results].map(normalize).sort();
}
