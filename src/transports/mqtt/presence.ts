// Presence (docs/transports.md): each agent keeps a retained document on `{prefix}/{swarm}/{agent}/status`.
// It publishes `ready` (or `busy`) when connected; its Last Will, registered at CONNECT, replaces the document with
// `offline` when the broker loses it without a clean DISCONNECT (kill -9, power loss, network gone past the
// keepalive). A clean shutdown publishes `offline` itself. Retained, so a peer or dashboard that subscribes later
// still sees the latest state. Swarm mapping (§5.10 discover): ready → ready, busy → busy, offline → unavailable.
export type PresenceStatus = 'ready' | 'busy' | 'offline';

export interface Presence {
  status: PresenceStatus;
  agent: string;
  swarm: string;
  /** ISO time of the publication (absent in the Last Will, which is fixed at CONNECT time). */
  ts?: string;
  /** Anything else the agent announces (capabilities, version). */
  info?: Record<string, unknown>;
}

export function presencePayload(p: Presence): string {
  return JSON.stringify(p);
}

/** Parse a status payload; undefined for an empty (cleared) or foreign document. */
export function parsePresence(payload: Uint8Array): Presence | undefined {
  if (payload.length === 0) return undefined;
  try {
    const v = JSON.parse(new TextDecoder().decode(payload)) as Record<string, unknown>;
    if (!v || typeof v !== 'object') return undefined;
    if (v.status !== 'ready' && v.status !== 'busy' && v.status !== 'offline') return undefined;
    if (typeof v.agent !== 'string' || typeof v.swarm !== 'string') return undefined;
    return {
      status: v.status,
      agent: v.agent,
      swarm: v.swarm,
      ts: typeof v.ts === 'string' ? v.ts : undefined,
      info: v.info && typeof v.info === 'object' && !Array.isArray(v.info) ? (v.info as Record<string, unknown>) : undefined,
    };
  } catch {
    return undefined;
  }
}
