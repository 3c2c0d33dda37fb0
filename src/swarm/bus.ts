// The swarm's one port to the outside: who is there, and how to reach them. The coordinator and
// the peer side (./coordinator.ts, ./peer.ts) know only this; adapters carry it over memory
// (./memory-bus.ts, tests), a shared directory (./fs-bus.ts) or an MQTT broker (./mqtt-bus.ts).

/** Spec §9.3.3 claw.swarm.discover statuses. */
export type PeerStatus = 'ready' | 'busy' | 'unavailable';

/** What a peer says about itself. Self-declared, hence untrusted: used for routing only. */
export interface Presence {
  identity: string;
  swarm: string;
  role: string;
  status: PeerStatus;
}

/** A presence as this agent last saw it; `status` is already 'unavailable' when the peer went stale. */
export interface SeenPeer extends Presence {
  /** Wall-clock ms of the last presence update seen. */
  seen_at: number;
}

/** A request or notification from a peer. `method`/`params` come from the wire: validate them. */
export interface BusMessage {
  method: string;
  params: unknown;
}

/** Answers a peer's request: the result, or a thrown ProtocolError that becomes its error reply. */
export type BusHandler = (msg: BusMessage) => Promise<unknown>;

export interface PeerBus {
  /** This agent's identity on the bus. */
  readonly self: string;
  /** Begin receiving requests and notifications addressed to `self`. */
  start(handler: BusHandler): Promise<void>;
  /** Publish (or refresh) this agent's presence. */
  announce(p: Presence): Promise<void>;
  /** Peers seen in `swarm`, never `self`. */
  peers(swarm: string): SeenPeer[];
  /**
   * Send a request and wait for the reply's result. Rejects with a PeerUnreachable BusError when
   * nothing answers within timeoutMs (or the peer cannot be addressed), or with the ProtocolError
   * the peer replied with.
   */
  request(to: string, method: string, params: unknown, timeoutMs: number): Promise<unknown>;
  /** Fire-and-forget (claw.swarm.broadcast); rejects only when the message could not be handed over. */
  notify(to: string, method: string, params: unknown): Promise<void>;
  /** Withdraw presence (peers see 'unavailable') and stop receiving. */
  close(): Promise<void>;
}

/** A local error of the bus: the peer could not be reached (→ -32040, retryable, profile §4). */
export class BusError extends Error {
  constructor(
    readonly code: 'unreachable' | 'closed',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'BusError';
  }
}

/** Canonical identity URI (spec §7): peers are named by their Identity. */
export const identityUri = (identity: string) => `claw://local/identity/${identity}`;
