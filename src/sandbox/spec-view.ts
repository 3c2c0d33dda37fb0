// Reading a SandboxSpec (spec §5.8) with this runtime's defaults in one place, so the level check,
// the runner, the path check and the doctor agree on what an absent field means.
//
// Absent fields: the spec gives no defaults for capabilities. An absent block is "not restricted"
// (the same reading as src/gates/narrow-sandbox.ts), except secrets, whose absent `injection` is
// `host-boundary` (spec §5.8 example and §10.2 "host-boundary injection": secrets never reach the
// tool unless the sandbox says how).
import type { SandboxSpec } from '../manifest/schema/index.ts';

export type Caps = NonNullable<SandboxSpec['capabilities']>;
export type FsCaps = NonNullable<Caps['filesystem']>;
export type ShellCaps = NonNullable<Caps['shell']>;
export type FsMode = NonNullable<FsCaps['mode']>;
export type NetMode = NonNullable<NonNullable<Caps['network']>['mode']>;
export type Injection = NonNullable<NonNullable<Caps['secrets']>['injection']>;
export type Limits = NonNullable<SandboxSpec['resource_limits']>;

export const fsMode = (s: SandboxSpec): FsMode => s.capabilities?.filesystem?.mode ?? 'full';
/**
 * An absent network mode is `allow-all` (SSRF protection stays on unless turned off): one reading for
 * the runner, http-fetch and sandbox narrowing alike (docs/tools.md). Declare `deny` to cut it off.
 */
export const netMode = (s: SandboxSpec): NetMode => s.capabilities?.network?.mode ?? 'allow-all';
/** `shell` with no shell block is `restricted`: argv only, blocked lists applied (docs/tools.md). */
export const shellMode = (s: SandboxSpec): NonNullable<ShellCaps['mode']> => s.capabilities?.shell?.mode ?? 'restricted';
export const injectionMode = (s: SandboxSpec): Injection => s.capabilities?.secrets?.injection ?? 'host-boundary';
export const deniedPaths = (s: SandboxSpec): string[] => s.capabilities?.filesystem?.denied_paths ?? [];
export const mountPaths = (s: SandboxSpec) => s.capabilities?.filesystem?.mount_paths ?? [];

/** A limit of 0 is read as "not set": a 0-byte memory cap or 0 ms timeout cannot run anything. */
export function limit(s: SandboxSpec, key: keyof Limits): number | undefined {
  const v = s.resource_limits?.[key];
  return typeof v === 'number' && v > 0 ? v : undefined;
}

/** CKP §5.4 (tool `timeout_ms`) and §5.8 (`resource_limits.timeout_ms`): the smaller one wins. */
export function effectiveTimeout(s: SandboxSpec, toolTimeoutMs?: number): number | undefined {
  const a = toolTimeoutMs !== undefined && toolTimeoutMs > 0 ? toolTimeoutMs : undefined;
  const b = limit(s, 'timeout_ms');
  if (a === undefined) return b;
  return b === undefined ? a : Math.min(a, b);
}

/** When `max_output_bytes` is absent: 10 MiB, the value of the spec §5.8 example. */
export const DEFAULT_MAX_OUTPUT_BYTES = 10 * 1024 * 1024;
/** Grace between SIGTERM and SIGKILL (runtime profile §10 "after a grace period"). */
export const DEFAULT_GRACE_MS = 2000;
