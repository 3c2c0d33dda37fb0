// Entry point of the provider clients. Importing this costs nothing: the clients (HTTP, SSE,
// protocol adapters, rules) load on the first complete() through a dynamic import, so an agent
// that starts without talking to a model (Level 1, `claw run` serving tool calls) never pays for them.
import type { ProviderClient } from '../kernel/ports.ts';
import type { ResolvedPrimitive } from '../manifest/resolved.ts';
import type { ProviderDeps } from './deps.ts';

export type { ProviderDeps } from './deps.ts';

/** A client for `primary` (default: the manifest's first provider) and its fallback chain. */
export function createProviderClient(deps: ProviderDeps, primary?: ResolvedPrimitive): ProviderClient {
  let chain: Promise<ProviderClient> | undefined;
  return {
    async complete(req) {
      chain ??= import('./chain.ts').then((m) => m.createChain(deps, primary));
      return (await chain).complete(req);
    },
  };
}
