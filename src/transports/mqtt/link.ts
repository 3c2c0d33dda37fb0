// The swarm-facing API over one broker connection (docs/transports.md, "MQTT for the swarm"):
//  - request(peer, message): publish to the peer's inbox (QoS 1) with a reply route (MQTT 5 response topic +
//    correlation data, or the 3.1.1 envelope) and wait for the correlated reply;
//  - notify(peer, message): publish to the peer's inbox, no reply;
//  - publishPresence / watchPresence / peers(): the retained presence documents of the swarm.
// Used by `claw send mqtt://...` (its own connection) and by a listening agent (the transport's connection).
import { nodeCrypto } from '../../node/lazy.ts';
import { ClawError } from '../../protocol/errors.ts';
import type { JsonRpcMessage } from '../../protocol/jsonrpc.ts';
import type { MqttConnection } from './connection.ts';
import { decodeReply, encodeRequest, type MqttProps } from './envelope.ts';
import { agentOfStatusTopic, agentTopics, presenceFilter, replyTopic } from './topics.ts';
import { parsePresence, presencePayload, type Presence, type PresenceStatus } from './presence.ts';
import { timerDelay } from '../../protocol/delay.ts';

export interface LinkOptions {
  connection: MqttConnection;
  swarm: string;
  prefix: string;
  protocolVersion: 4 | 5;
  /** Unique per connection: names the reply topic. */
  clientId: string;
  /** This side's agent name, when it has one (publishPresence needs it). */
  agent?: string;
}

export interface PeerRequestOptions {
  timeoutMs?: number;
  /** Reuse to retry safely: the peer answers a known request_id from its stored reply (profile §5). */
  requestId?: string;
}

export class MqttSwarmLink {
  private readonly pending = new Map<string, { resolve: (text: string) => void }>();
  private readonly presence = new Map<string, Presence>();
  private readonly presenceListeners = new Set<(agent: string, p: Presence | undefined) => void>();
  private readonly notificationListeners = new Set<(text: string) => void>();
  private presenceWatched = false;
  readonly replyTopic: string;

  constructor(private readonly o: LinkOptions) {
    this.replyTopic = replyTopic(o.swarm, o.clientId, o.prefix);
  }

  /** Subscribe the reply topic (before the first request, so no reply can be missed). */
  async start(): Promise<void> {
    await this.o.connection.subscribe(this.replyTopic);
  }

  /** Route a message of the connection; true when it was ours. */
  handle(topic: string, payload: Uint8Array, props: MqttProps | undefined): boolean {
    if (topic === this.replyTopic) {
      const r = decodeReply(payload, props);
      const p = r.requestId !== undefined ? this.pending.get(r.requestId) : undefined;
      if (p) {
        this.pending.delete(r.requestId!);
        p.resolve(r.text);
      }
      // A duplicate reply (QoS 1 redelivery, a retried request answered twice) finds no pending entry: dropped.
      return true;
    }
    const agent = agentOfStatusTopic(topic, this.o.swarm, this.o.prefix);
    if (agent !== undefined) {
      const p = parsePresence(payload);
      if (p) this.presence.set(agent, p);
      else this.presence.delete(agent);
      for (const fn of this.presenceListeners) fn(agent, p);
      return true;
    }
    return false;
  }

  /** Send a request to `peer` and resolve with its reply (a JSON-RPC response, or an array for a batch). */
  async request(peer: string, message: JsonRpcMessage | JsonRpcMessage[], opts: PeerRequestOptions = {}): Promise<unknown> {
    const requestId = opts.requestId ?? nodeCrypto().randomUUID();
    const timeoutMs = opts.timeoutMs ?? 30_000;
    // Aborted at the timeout: a request still waiting for the broker is then dropped, not published after the
    // reconnect for a peer to run when its caller already has its timeout (connection.ts publish()).
    const gaveUp = new AbortController();
    const text = await new Promise<string>((resolve, reject) => {
      const t = setTimeout(() => {
        this.pending.delete(requestId);
        gaveUp.abort();
        reject(new ClawError('timeout', `no reply from ${peer} within ${timeoutMs} ms (request_id ${requestId})`));
      }, timerDelay(timeoutMs));
      this.pending.set(requestId, { resolve: (s) => (clearTimeout(t), resolve(s)) });
      const out = encodeRequest(message, { replyTo: this.replyTopic, requestId }, this.o.protocolVersion === 5);
      this.o.connection.publish(agentTopics(this.o.swarm, peer, this.o.prefix).inbox, out.payload, { props: out.props, signal: gaveUp.signal }).catch((e: Error) => {
        if (gaveUp.signal.aborted) return; // already rejected with the timeout
        clearTimeout(t);
        this.pending.delete(requestId);
        reject(new ClawError('unreachable', `could not publish to ${peer}: ${e.message}`, { cause: e }));
      });
    });
    return JSON.parse(text);
  }

  /** Send a notification to `peer`'s inbox; resolves at the broker's PUBACK. */
  async notify(peer: string, message: JsonRpcMessage, opts: { requestId?: string } = {}): Promise<void> {
    // A request_id lets the peer drop a redelivered copy; notifications carry one too, with no reply route.
    const out = opts.requestId
      ? encodeRequest(message, { replyTo: '', requestId: opts.requestId }, this.o.protocolVersion === 5)
      : { payload: JSON.stringify(message), props: undefined };
    if (out.props) delete out.props.responseTopic;
    await this.o.connection.publish(agentTopics(this.o.swarm, peer, this.o.prefix).inbox, out.payload, { props: out.props });
  }

  /** Publish raw text to `peer`'s inbox with a reply route, and wait for the reply (tests: malformed frames). */
  async requestRaw(peer: string, text: string, opts: PeerRequestOptions = {}): Promise<unknown> {
    // 3.1.1 needs an envelope around a message; raw text cannot be wrapped, so raw frames need MQTT 5.
    if (this.o.protocolVersion !== 5) throw new ClawError('usage', 'raw frames need MQTT 5 (3.1.1 carries the reply route inside the JSON payload)');
    const requestId = opts.requestId ?? nodeCrypto().randomUUID();
    const timeoutMs = opts.timeoutMs ?? 30_000;
    const gaveUp = new AbortController();
    const reply = await new Promise<string>((resolve, reject) => {
      const t = setTimeout(() => (this.pending.delete(requestId), gaveUp.abort(), reject(new ClawError('timeout', `no reply from ${peer} within ${timeoutMs} ms`))), timerDelay(timeoutMs));
      this.pending.set(requestId, { resolve: (s) => (clearTimeout(t), resolve(s)) });
      this.o.connection
        .publish(agentTopics(this.o.swarm, peer, this.o.prefix).inbox, text, { props: { responseTopic: this.replyTopic, correlationData: new TextEncoder().encode(requestId) }, signal: gaveUp.signal })
        .catch((e: Error) => (clearTimeout(t), this.pending.delete(requestId), reject(e)));
    });
    return JSON.parse(reply);
  }

  /** Replace this agent's retained presence document. */
  async publishPresence(status: PresenceStatus, info?: Record<string, unknown>): Promise<void> {
    if (!this.o.agent) throw new ClawError('usage', 'this MQTT link has no agent name: presence needs one');
    const doc: Presence = { status, agent: this.o.agent, swarm: this.o.swarm, ts: new Date().toISOString(), info };
    await this.o.connection.publish(agentTopics(this.o.swarm, this.o.agent, this.o.prefix).status, presencePayload(doc), { retain: true });
  }

  /** Subscribe to every agent's presence in the swarm; `fn` gets each change (undefined: document cleared). */
  async watchPresence(fn?: (agent: string, p: Presence | undefined) => void): Promise<() => void> {
    if (fn) this.presenceListeners.add(fn);
    if (!this.presenceWatched) {
      this.presenceWatched = true;
      await this.o.connection.subscribe(presenceFilter(this.o.swarm, this.o.prefix));
    }
    return () => {
      if (fn) this.presenceListeners.delete(fn);
    };
  }

  /** The latest presence seen per agent (after watchPresence). */
  peers(): ReadonlyMap<string, Presence> {
    return this.presence;
  }

  /** Notifications an agent published to its outbox (claw.heartbeat…), for a client that watches one agent. */
  async watchOutbox(agent: string, fn: (text: string) => void): Promise<void> {
    this.notificationListeners.add(fn);
    await this.o.connection.subscribe(agentTopics(this.o.swarm, agent, this.o.prefix).outbox);
  }

  handleOutbox(topic: string, payload: Uint8Array, agent: string | undefined): boolean {
    if (!agent || topic !== agentTopics(this.o.swarm, agent, this.o.prefix).outbox) return false;
    const text = new TextDecoder().decode(payload);
    for (const fn of this.notificationListeners) fn(text);
    return true;
  }

  /** Reject every request still waiting (the connection is closing). */
  abandon(): void {
    this.pending.clear();
  }
}
