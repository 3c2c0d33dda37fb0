// How the runtime reaches one Streamable HTTP MCP server: the network guard under the sandbox the
// server's tools run under (mode, allowlist, SSRF with DNS pinning, redirects re-checked; spec §5.8,
// §10.2) and the authentication headers from claw.runtime.yaml `mcp.servers` (values by secret_ref).
import { guardedRequest, type GuardedFetchDeps } from '../../net/guarded-fetch.ts';
import { defaultAddressCheck, netPolicy, type NetworkCaps } from '../../net/net-policy.ts';
import { netMode } from '../../sandbox/spec-view.ts';
import type { SandboxSpec } from '../../manifest/schema/index.ts';
import type { McpHttpAccess } from './backend.ts';
import type { McpRuntimeConfig } from './config.ts';
import { httpTargetProblem, type McpHttpTarget } from './uri.ts';

export interface McpHttpAccessDeps {
  config: McpRuntimeConfig | undefined;
  resolveSecret(ref: string): Promise<string>;
  /** Resolver override (tests). */
  lookup?: GuardedFetchDeps['lookup'];
}

export function mcpHttpAccess(target: McpHttpTarget, sandbox: SandboxSpec, d: McpHttpAccessDeps): McpHttpAccess {
  const server = d.config?.servers?.[target.uri];
  const allowLoopback = server?.allow_loopback === true;
  // The network mode as every layer reads it (src/sandbox/spec-view.ts netMode: absent → allow-all).
  const network: NetworkCaps = { ...sandbox.capabilities?.network, mode: netMode(sandbox) };
  const ssrf = defaultAddressCheck(netPolicy(network));
  // allow_loopback lifts the SSRF verdict for loopback addresses only; private ranges, metadata
  // endpoints and the rest stay refused, and the sandbox's mode and allowlist still apply.
  const checkAddress = allowLoopback ? (a: string) => (ssrf(a) === 'loopback' ? null : ssrf(a)) : ssrf;
  return {
    problem: httpTargetProblem(target, allowLoopback),
    request: (url, init) => guardedRequest(url, init, network, { checkAddress, lookup: d.lookup }),
    headers: async () => {
      const h: Record<string, string> = {};
      for (const [name, value] of Object.entries(server?.headers ?? {})) {
        h[name.toLowerCase()] = typeof value === 'string' ? value : await d.resolveSecret(value.secret_ref);
      }
      if (server?.bearer_secret_ref) h.authorization = `Bearer ${await d.resolveSecret(server.bearer_secret_ref)}`;
      return h;
    },
  };
}
