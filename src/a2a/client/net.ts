// The client's only way out: the runtime's network guard (src/net/guarded-fetch.ts) under one set of
// network rules — mode, allowlist, SSRF refusal with DNS pinning, redirects re-checked per hop, size caps,
// deadlines. Nothing in src/a2a/client opens a socket itself.
import { guardedFetch, guardedRequest, type GuardedFetchDeps, type GuardedFetchInit, type GuardedFetchResult, type GuardedRequestInit, type GuardedResponse } from '../../net/guarded-fetch.ts';
import { defaultAddressCheck, netPolicy, type NetworkCaps } from '../../net/net-policy.ts';
import type { BlockReason } from '../../net/ip-ranges.ts';

export interface A2aNet {
  /** A whole (capped) body: the card, JSON-RPC replies. */
  fetch(url: string, init: GuardedFetchInit): Promise<GuardedFetchResult>;
  /** A body read as it arrives: the SSE stream of SendStreamingMessage. */
  request(url: string, init: GuardedRequestInit): Promise<GuardedResponse>;
}

export interface GuardedNetOptions {
  /**
   * SSRF verdicts lifted for these address ranges only (e.g. `loopback` for a peer on this machine); every
   * other refusal (metadata endpoints, the sandbox's mode and allowlist) stays.
   */
  allowRanges?: readonly (BlockReason | string)[];
  /** Resolver override (tests). */
  lookup?: GuardedFetchDeps['lookup'];
}

export function guardedNet(network: NetworkCaps, o: GuardedNetOptions = {}): A2aNet {
  const ssrf = defaultAddressCheck(netPolicy(network));
  const lifted = new Set(o.allowRanges ?? []);
  const checkAddress = (a: string) => {
    const r = ssrf(a);
    return r !== null && lifted.has(r) ? null : r;
  };
  const deps: GuardedFetchDeps = { checkAddress, ...(o.lookup ? { lookup: o.lookup } : {}) };
  return {
    fetch: (url, init) => guardedFetch(url, init, network, deps),
    request: (url, init) => guardedRequest(url, init, network, deps),
  };
}
