// What the a2a-send builtin needs from the runtime (docs/a2a.md "Client"): the peers of claw.runtime.yaml
// `a2a.peers` and a way to send one of them a message. The runtime builds it (src/runtime/a2a-peers.ts)
// around the A2A client, so this layer never imports it.
import type { NetworkCaps } from '../../net/net-policy.ts';

export type A2aPeerReply =
  | { ok: true; agent: string; state: string; text: string; taskId?: string; contextId?: string }
  /** The exchange failed (card, protocol, auth, timeout): a message safe to show (no credential). */
  | { ok: false; error: string };

export interface A2aPeerPort {
  has(peer: string): boolean;
  /**
   * Sends `text` to the peer under these network rules (the tool's sandbox): a refusal by them is thrown as
   * a SandboxViolation before any request leaves.
   */
  send(peer: string, text: string, o: { network: NetworkCaps; signal?: AbortSignal; timeoutMs?: number; contextId?: string }): Promise<A2aPeerReply>;
}
