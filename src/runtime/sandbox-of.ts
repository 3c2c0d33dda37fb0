// Which sandbox a tool runs under (spec §5.4 sandbox_ref, §5.8): its own sandbox_ref, else the
// manifest's Sandbox, else a process-level sandbox with nothing declared (not possible at Level 2,
// where a Sandbox is required, but never "no sandbox").
import { resolveRef } from '../manifest/refs.ts';
import type { ResolvedManifest } from '../manifest/resolved.ts';
import type { SandboxSpec } from '../manifest/schema/index.ts';

const FALLBACK_SANDBOX: SandboxSpec = { level: 'process' };

export function sandboxOf(m: ResolvedManifest, ref: string | undefined): SandboxSpec {
  const r = ref ? resolveRef(m, 'Sandbox', ref) : undefined;
  return ((r?.ok ? r.primitive : m.sandbox)?.spec as SandboxSpec) ?? FALLBACK_SANDBOX;
}
