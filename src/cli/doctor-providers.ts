// The provider half of `claw doctor <manifest> [--probe]` (src/provider/doctor.ts does the checks): loads
// the manifest and its claw.runtime.yaml as `claw chat` would, so secrets resolve the same way.
import { TokenLedger } from '../kernel/ledger.ts';
import { checkProviders, providerDoctorReport, type ProviderReport } from '../provider/doctor.ts';
import { providerTimeoutsOf } from '../runtime/provider-chain.ts';
import type { ParsedArgs } from './args.ts';
import type { CliEnv } from './env.ts';
import { prepareRuntime } from './runtime-setup.ts';

/** The reports, or an exit code when the manifest or configuration does not load. */
export async function providerReports(env: CliEnv, args: ParsedArgs): Promise<ProviderReport[] | number> {
  const setup = await prepareRuntime(env, args, { defaultLogLevel: 'error' });
  if (typeof setup === 'number') return setup;
  // Nothing is charged: the probes are a few tokens and the ledger is not this command's business.
  const ledger = new TokenLedger({ load: async () => undefined, save: async () => {} }, env.clock);
  // The provider's own timeout_ms bounds each request (docs/providers.md "Doctor"), as it bounds a chat.
  const timeouts = providerTimeoutsOf(setup.config);
  return checkProviders(setup.launchManifest!, { secrets: setup.secrets, clock: env.clock, ledger, ...(timeouts ? { timeouts } : {}) }, { probe: args.flags.has('probe') });
}

export { providerDoctorReport };

/** Non-zero when the primary provider cannot be used (docs/providers.md "Doctor"). */
export const primaryUnusable = (reports: readonly ProviderReport[]): boolean => reports.some((r) => r.primary && !r.usable);
