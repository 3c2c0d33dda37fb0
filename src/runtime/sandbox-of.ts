// Which sandbox a tool runs under (spec §5.4 sandbox_ref, §5.8): its own sandbox_ref, else the
// manifest's Sandbox, else a process-level sandbox with nothing declared (not possible at Level 2,
// where a Sandbox is required, but never "no sandbox").
import { resolveRef } from '../manifest/refs.ts';
import { dirnameOf, joinPath } from '../manifest/reader.ts';
import type { ResolvedManifest, ResolvedPrimitive } from '../manifest/resolved.ts';
import type { SandboxSpec } from '../manifest/schema/index.ts';

const FALLBACK_SANDBOX: SandboxSpec = { level: 'process' };

export function sandboxOf(m: ResolvedManifest, ref: string | undefined): SandboxSpec {
  const r = ref ? resolveRef(m, 'Sandbox', ref) : undefined;
  const p = r?.ok ? r.primitive : m.sandbox;
  return p ? withAbsolutePaths(p) : FALLBACK_SANDBOX;
}

/**
 * Relative `mount_paths` / `denied_paths` are relative to the file that declares the Sandbox, like every
 * other path in a manifest (docs/manifest.md), never to wherever the runtime was started. A manifest
 * that came over the wire (`<initialize>`) has no directory: its relative paths stay as written.
 */
function withAbsolutePaths(p: ResolvedPrimitive): SandboxSpec {
  const spec = p.spec as SandboxSpec;
  const fs = spec.capabilities?.filesystem;
  if (!fs || !p.origin.file.startsWith('/')) return spec;
  const base = dirnameOf(p.origin.file);
  const abs = (x: string) => (x.startsWith('/') ? x : joinPath(base, x));
  const needs = (fs.mount_paths ?? []).some((mp) => !mp.path.startsWith('/')) || (fs.denied_paths ?? []).some((d) => !d.startsWith('/'));
  if (!needs) return spec;
  return {
    ...spec,
    capabilities: {
      ...spec.capabilities,
      filesystem: {
        ...fs,
        ...(fs.mount_paths ? { mount_paths: fs.mount_paths.map((mp) => ({ ...mp, path: abs(mp.path) })) } : {}),
        ...(fs.denied_paths ? { denied_paths: fs.denied_paths.map(abs) } : {}),
      },
    },
  };
}
