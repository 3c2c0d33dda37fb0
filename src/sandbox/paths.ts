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
// Residual risk: a symlink swapped in between this check and the open (TOCTOU). Callers open the
// returned `real` path, which narrows the window to a swap of one of its components.
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

export async function checkPath(path: string, access: 'read' | 'write', fs: FsCaps | undefined, cwd: string): Promise<PathCheck> {
  const mode = fs?.mode ?? 'full';
  if (mode === 'deny') return { ok: false, reason: 'the sandbox denies filesystem access (filesystem.mode: deny)' };
  if (typeof path !== 'string' || path === '' || path.includes('\0')) return { ok: false, reason: 'invalid path' };
  // Not path.resolve: it would apply `..` lexically before symlinks are seen (`link/..` ≠ dirname).
  const joined = isAbsolute(path) ? path : `${resolve(cwd)}/${path}`;
  const lexical = resolve(joined);
  let real: string;
  try {
    real = await resolveReal(joined);
  } catch (e) {
    return { ok: false, reason: `cannot resolve ${path}: ${(e as Error).message}` };
  }
  for (const d of fs?.denied_paths ?? []) {
    const dl = resolve(cwd, d);
    const dr = await resolveReal(dl).catch(() => dl);
    if (within(real, dr) || within(lexical, dl) || within(real, dl)) return { ok: false, reason: `${path} is inside denied path ${d}` };
  }
  if (mode === 'full') return { ok: true, real };
  if (mode === 'read-only') {
    return access === 'read' ? { ok: true, real } : { ok: false, reason: 'the sandbox filesystem is read-only (filesystem.mode: read-only)' };
  }
  // scoped: the deepest mount containing the real path decides.
  let best: { dir: string; rw: boolean; decl: string } | undefined;
  for (const m of fs?.mount_paths ?? []) {
    const ml = resolve(cwd, m.path);
    const mr = await resolveReal(ml).catch(() => ml);
    if (within(real, mr) && (!best || mr.length > best.dir.length)) best = { dir: mr, rw: m.permissions === 'rw', decl: m.path };
  }
  if (!best) return { ok: false, reason: `${path} resolves to ${real}, outside the sandbox's mount_paths` };
  if (access === 'write' && !best.rw) return { ok: false, reason: `${path} is in read-only mount ${best.decl}` };
  return { ok: true, real };
}
