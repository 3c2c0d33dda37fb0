// One provider chain per session, shared by the agent loop, composite tools and memory's embeddings and
// summaries (docs/agent.md "Composite tools", docs/memory.md "Embeddings and summaries"): requests_per_minute
// windows and the token ledger then count them all, and one TokenLedger keeps its per-provider writes serialized.
// Clients load on first use.
import { createProviderClient, type ProviderDeps } from '../provider/index.ts';
import type { ProviderTimeouts } from '../provider/deps.ts';
import type { RuntimeConfig } from '../config/runtime-config.ts';
import { TokenLedger, type LedgerStore } from '../kernel/ledger.ts';
import type { Clock, Logger, TelemetrySink } from '../kernel/ports.ts';
import type { ResolvedManifest } from '../manifest/resolved.ts';
import type { SecretResolver } from '../kernel/secrets.ts';

export interface SessionProviders {
  deps(m: ResolvedManifest, telemetry: TelemetrySink): ProviderDeps;
  client(m: ResolvedManifest, telemetry: TelemetrySink): ReturnType<typeof createProviderClient>;
}

/** claw.runtime.yaml `providers.<name>.timeout_ms` / `attempt_deadline_ms` (docs/providers.md "Timeouts"). */
export function providerTimeoutsOf(c: Pick<RuntimeConfig, 'providers'> | undefined): Record<string, ProviderTimeouts> | undefined {
  if (!c?.providers) return undefined;
  const out: Record<string, ProviderTimeouts> = {};
  for (const [name, p] of Object.entries(c.providers)) {
    if (p.timeout_ms === undefined && p.attempt_deadline_ms === undefined) continue;
    out[name] = { ...(p.timeout_ms === undefined ? {} : { timeoutMs: p.timeout_ms }), ...(p.attempt_deadline_ms === undefined ? {} : { attemptDeadlineMs: p.attempt_deadline_ms }) };
  }
  return out;
}

export function sessionProviders(d: { ledgerStore: LedgerStore; secrets: SecretResolver; clock: Clock; log: Logger; config?: RuntimeConfig }): SessionProviders {
  const timeouts = providerTimeoutsOf(d.config);
  /** The chain of the current (manifest, telemetry): a new session gets a new one. */
  let chain: { m: ResolvedManifest; telemetry: TelemetrySink; deps: ProviderDeps; client?: ReturnType<typeof createProviderClient> } | undefined;
  const current = (m: ResolvedManifest, telemetry: TelemetrySink) =>
    chain?.m === m && chain.telemetry === telemetry
      ? chain
      : (chain = { m, telemetry, deps: { manifest: m, ledger: new TokenLedger(d.ledgerStore, d.clock), secrets: d.secrets, clock: d.clock, log: d.log, telemetry, timeouts } });
  return {
    deps: (m, telemetry) => current(m, telemetry).deps,
    client(m, telemetry) {
      const c = current(m, telemetry);
      return (c.client ??= createProviderClient(c.deps));
    },
  };
}
