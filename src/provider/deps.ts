// What the provider clients need from the runtime, all injected (no globals besides fetch's default).
import type { Clock, Logger } from '../kernel/ports.ts';
import type { TokenLedger } from '../kernel/ledger.ts';
import type { ResolvedManifest } from '../manifest/resolved.ts';
import type { MinuteWindow } from './limits.ts';

/** Default idle limit of one attempt: to response headers, then between body/stream chunks. */
export const DEFAULT_TIMEOUT_MS = 120_000;
/** Default total of one attempt: bytes that keep coming (SSE keep-alive comments, a trickling proxy) still end. */
export const DEFAULT_ATTEMPT_DEADLINE_MS = 600_000;

/** One provider's limits from claw.runtime.yaml `providers.<name>` (docs/providers.md "Timeouts"). */
export interface ProviderTimeouts {
  timeoutMs?: number;
  attemptDeadlineMs?: number;
}

export interface ProviderDeps {
  manifest: ResolvedManifest;
  /** Daily token ledger (spec §5.2 tokens_per_day) over the LedgerStore port; share the quota gate's instance. */
  ledger: TokenLedger;
  /** secret_ref → value (src/kernel/secrets.ts SecretResolver, which also registers it for redaction). */
  secrets: { resolve(ref: string): Promise<string> };
  clock: Clock;
  log?: Logger;
  /**
   * Structurally a subset of the kernel's TelemetrySink: latency of each successful request (spec
   * §5.11 latency_histogram). Token usage is returned in the response; the agent loop reports it.
   */
  telemetry?: { latency(operation: string, ms: number): void };
  fetch?: typeof fetch;
  /** Jitter source in [0, 1). */
  random?: () => number;
  /** Waits (backoff, Retry-After, requests_per_minute); defaults to an abortable clock.setTimeout. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Reads a custom provider's rules file; defaults to node:fs/promises readFile. */
  readFile?: (path: string) => Promise<Uint8Array>;
  /** Idle limit for every provider without its own (tests; default DEFAULT_TIMEOUT_MS). */
  timeoutMs?: number;
  /** Total per attempt for every provider without its own (default DEFAULT_ATTEMPT_DEADLINE_MS). */
  attemptDeadlineMs?: number;
  /** By provider name: claw.runtime.yaml `providers.<name>.timeout_ms` / `attempt_deadline_ms`. */
  timeouts?: Record<string, ProviderTimeouts>;
  /**
   * requests_per_minute windows by provider name (attempts.ts windowFor), filled on first use: every
   * client built over the same deps object — chat, composite tools, embeddings — shares them.
   */
  windows?: Map<string, MinuteWindow>;
}

/** The limits of one attempt to `provider`: its own settings, else the deps-wide ones, else the defaults. */
export function attemptLimits(deps: ProviderDeps, provider: string): { idleMs: number; deadlineMs: number; provider: string } {
  const own = deps.timeouts?.[provider];
  return {
    provider,
    idleMs: own?.timeoutMs ?? deps.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    deadlineMs: own?.attemptDeadlineMs ?? deps.attemptDeadlineMs ?? DEFAULT_ATTEMPT_DEADLINE_MS,
  };
}
