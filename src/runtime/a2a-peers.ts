// The a2a-send builtin's port (src/tools/builtins/a2a-port.ts) over the A2A client (src/a2a/client), for the
// peers of claw.runtime.yaml `a2a.peers` (docs/a2a.md "Client"). Each call reads the peer's card afresh
// (a card may change; a board sends few messages), under the calling tool's network rules; the bearer
// token is resolved from its secret_ref per call and only ever becomes a header.
import type { A2aPeerConfig } from '../a2a/client/config.ts';
import type { A2aPeerPort } from '../tools/builtins/a2a-port.ts';
import type { SecretResolver } from '../kernel/secrets.ts';
import type { Lookup } from '../net/guarded-fetch.ts';
import { FetchFailed, NetworkDenied } from '../net/net-policy.ts';
import { SandboxViolation } from '../tools/types.ts';

export interface A2aPeerDeps {
  secrets: Pick<SecretResolver, 'resolve'>;
  /** Resolver override (tests). */
  lookup?: Lookup;
}

const CARD_TIMEOUT_MS = 15_000;

export function a2aPeerPort(peers: readonly A2aPeerConfig[], d: A2aPeerDeps): A2aPeerPort {
  const byName = new Map(peers.map((p) => [p.name, p]));
  return {
    has: (name) => byName.has(name),
    async send(name, text, o) {
      const peer = byName.get(name);
      if (!peer) throw new SandboxViolation('a2a.peer', `a2a-send: peer "${name}" is not in a2a.peers`);
      const c = await import('../a2a/client/index.ts');
      const net = c.guardedNet(o.network, { allowRanges: peer.allow_loopback ? ['loopback'] : [], ...(d.lookup ? { lookup: d.lookup } : {}) });
      // The tool's own timeout (when it has one) caps the peer's.
      const timeoutMs = Math.min(peer.timeout_ms ?? c.DEFAULT_SEND_TIMEOUT_MS, o.timeoutMs !== undefined && o.timeoutMs > 0 ? o.timeoutMs : Infinity);
      try {
        const token = peer.auth ? await d.secrets.resolve(peer.auth.secret_ref) : undefined;
        const client = await c.A2aClient.open(c.cardUrlOf(peer.card_url), { net, token }, { signal: o.signal, timeoutMs: Math.min(CARD_TIMEOUT_MS, timeoutMs) });
        const r = await client.send(text, { signal: o.signal, timeoutMs, contextId: o.contextId, maxResultBytes: peer.max_result_bytes, maxArtifacts: peer.max_artifacts });
        return { ok: true, agent: r.agent, state: r.state, text: r.text, taskId: r.taskId, contextId: r.contextId };
      } catch (e) {
        // The tool's network rules refused the peer (or a redirect, or the endpoint its card names): -32010.
        if (e instanceof NetworkDenied) throw new SandboxViolation(`network.${e.reason}`, `a2a-send to ${name}: ${e.message}`);
        if (e instanceof c.A2aClientError || e instanceof FetchFailed) return { ok: false, error: e.message };
        throw e;
      }
    },
  };
}
