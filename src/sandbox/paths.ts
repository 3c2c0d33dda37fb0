// Filesystem scope for in-process file builtins (spec §5.8 capabilities.filesystem). Decisions are
// made on REAL paths: `..` is applied after symlinks are resolved (as the kernel does), a symlink
// anywhere in the path is followed, and a path that does not exist yet (a write) is resolved through
// its longest existing prefix. So `mount/../x` and `mount/link-to-outside/x` are judged where they
// really lead.
//
//   deny      → nothing
//   read-only → reads anywhere, no writes
//   scoped    → only inside mount_paths; writes only where the deepest containing mount is `rw`
//   full      → everything
//   denied_paths win over every mode and mount.
//
// Judging a path and then opening it by name races with a symlink swapped in between (TOCTOU): the
// file builtins open through safe-open.ts, which walks the path one component at a time through
// directory file descriptors and judges the path it really took with the `Scope` below.
import { lstat, readlink } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import type { FsCaps } from './spec-view.ts';

export type PathCheck = { ok: true; real: string } | { ok: false; reason: string };

const MAX_LINKS = 40; // Linux MAXSYMLINKS

/** realpath(3) that tolerates missing components: those are kept as written. */
export async function resolveReal(path: string): Promise<string> {
  if (!isAbsolute(path)) throw new Error(`resolveReal needs an absolute path: ${path}`);
  const pending = path.split('/').filter((p) => p !== '' && p !== '.');
  const stack: string[] = [];
  let links = 0;
  while (pending.length > 0) {
    const part = pending.shift()!;
    if (part === '..') {
      stack.pop();
      continue;
    }
    const candidate = `/${[...stack, part].join('/')}`;
    let isLink = false;
    try {
      isLink = (await lstat(candidate)).isSymbolicLink();
    } catch {
      isLink = false; // ENOENT / ENOTDIR: a name that does not exist (yet) is not a link
    }
    if (!isLink) {
      stack.push(part);
      continue;
    }
    if (++links > MAX_LINKS) throw Object.assign(new Error(`too many symbolic links: ${path}`), { code: 'ELOOP' });
    const target = await readlink(candidate);
    if (isAbsolute(target)) stack.length = 0;
    pending.unshift(...target.split('/').filter((p) => p !== '' && p !== '.'));
  }
  return `/${stack.join('/')}`;
}

export function within(path: string, dir: string): boolean {
  if (dir === '/') return true;
  return path === dir || path.startsWith(`${dir}/`);
}

/**
 * The sandbox makes its own /proc and /dev: a bind of the host's there (or of anything inside, such as
 * /proc/self/fd or /dev/fd → the runtime's open files) would show the host's processes, their roots and
 * file descriptors, writable sysctls, or devices.
 */
export const OWN_MOUNTS = ['/proc', '/dev'];

/** The path (a mount_path, real or as written) lies in the sandbox's own /proc or /dev: the one of OWN_MOUNTS, else undefined. */
export const inOwnMount = (path: string): string | undefined => OWN_MOUNTS.find((d) => within(path, d));

/**
 * A filesystem scope with its mounts and denied paths resolved once, judging paths that are already
 * real (every symlink resolved, `..` applied after). `lexical` is the requested path with `..` applied
 * as written: a denied path also matches it, so `denied/../x`-style spellings need no resolution.
 */
export interface Scope {
  mode: NonNullable<FsCaps['mode']>;
  /** Real directories of the mount_paths (scoped), shallowest first. */
  mountRoots: string[];
  /** No denied paths and a mode that allows everything of this access: nothing to escape from. */
  unconfined(access: 'read' | 'write'): boolean;
  /** undefined when allowed, else the reason. */
  judge(real: string, access: 'read' | 'write', requested: string, lexical?: string): string | undefined;
}

export async function loadScope(fs: FsCaps | undefined, cwd: string): Promise<Scope> {
  const mode = fs?.mode ?? 'full';
  const denied: { decl: string; lexical: string; real: string }[] = [];
  for (const d of fs?.denied_paths ?? []) {
    const lexical = resolve(cwd, d);
    denied.push({ decl: d, lexical, real: await resolveReal(lexical).catch(() => lexical) });
  }
  const mounts: { dir: string; rw: boolean; decl: string }[] = [];
  for (const m of mode === 'scoped' ? (fs?.mount_paths ?? []) : []) {
    const ml = resolve(cwd, m.path);
    mounts.push({ dir: await resolveReal(ml).catch(() => ml), rw: m.permissions === 'rw', decl: m.path });
  }
  return {
    mode,
    mountRoots: mounts.map((m) => m.dir).sort((a, b) => a.length - b.length),
    unconfined: (access) => denied.length === 0 && (mode === 'full' || (mode === 'read-only' && access === 'read')),
    judge(real, access, requested, lexical) {
      if (mode === 'deny') return 'the sandbox denies filesystem access (filesystem.mode: deny)';
      for (const d of denied) {
        if (within(real, d.real) || within(real, d.lexical) || (lexical !== undefined && within(lexical, d.lexical))) return `${requested} is inside denied path ${d.decl}`;
      }
      if (mode === 'full') return undefined;
      if (mode === 'read-only') return access === 'read' ? undefined : 'the sandbox filesystem is read-only (filesystem.mode: read-only)';
      // scoped: the deepest mount containing the real path decides.
      let best: (typeof mounts)[number] | undefined;
      for (const m of mounts) if (within(real, m.dir) && (!best || m.dir.length > best.dir.length)) best = m;
      if (!best) return `${requested} resolves to ${real}, outside the sandbox's mount_paths`;
      if (access === 'write' && !best.rw) return `${requested} is in read-only mount ${best.decl}`;
      return undefined;
    },
  };
}

/** The requested path joined with cwd, not normalized: `..` must meet the symlinks before it. */
export const joinCwd = (path: string, cwd: string): string => (isAbsolute(path) ? path : `${resolve(cwd)}/${path}`);

export const validPath = (path: unknown): path is string => typeof path === 'string' && path !== '' && !path.includes('\0');

/**
 * A one-shot judgement by resolving the path first. Only for decisions that open nothing (a working
 * directory): opening what was judged here races with a symlink swap — the file builtins open through
 * `openInScope` (safe-open.ts), which judges what it actually opens.
 */
export async function checkPath(path: string, access: 'read' | 'write', fs: FsCaps | undefined, cwd: string): Promise<PathCheck> {
  if ((fs?.mode ?? 'full') === 'deny') return { ok: false, reason: 'the sandbox denies filesystem access (filesystem.mode: deny)' };
  if (!validPath(path)) return { ok: false, reason: 'invalid path' };
  const joined = joinCwd(path, cwd);
  let real: string;
  try {
    real = await resolveReal(joined);
  } catch (e) {
    return { ok: false, reason: `cannot resolve ${path}: ${(e as Error).message}` };
  }
  const reason = (await loadScope(fs, cwd)).judge(real, access, path, resolve(joined));
  return reason === undefined ? { ok: true, real } : { ok: false, reason };
}
