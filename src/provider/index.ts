// Entry point of the provider clients. Importing this costs nothing: the clients (HTTP, SSE,
// protocol adapters, rules) load on the first complete() through a dynamic import, so an agent
// that starts without talking to a model (Level 1, `claw run` serving tool calls) never pays for them.
import type { ProviderClient } from '../kernel/ports.ts';
import type { ResolvedPrimitive } from '../manifest/resolved.ts';
import type { Chain, FailureRecord } from './chain.ts';
import type { ProviderDeps } from './deps.ts';

export type { ProviderDeps } from './deps.ts';

export type { FailureRecord } from './chain.ts';
export type { FemtoClawContract, ModelRequest, ModelResponse, OutputMode, OutputSetting } from './output-mode.ts';

/**
 * A client for `primary` (default: the manifest's first provider) and its fallback chain.
 * `prepare()` (optional, e.g. at STARTING) checks rules files and secrets without sending anything
 * and returns one record per problem; it loads the clients, so call it only for agents that use a model.
 */
export function createProviderClient(deps: ProviderDeps, primary?: ResolvedPrimitive): ProviderClient & { prepare(): Promise<FailureRecord[]> } {
  let chain: Promise<Chain> | undefined;
  const load = () => (chain ??= import('./chain.ts').then((m) => m.createChain(deps, primary)));
  return {
    complete: async (req) => (await load()).complete(req),
    prepare: async () => (await load()).prepare(),
  };
}
