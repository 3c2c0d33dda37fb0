// One broker connection: connect (TCP or TLS), QoS 1 publish/subscribe, subscriptions restored after every
// (re)connect, and reconnection with the runtime profile §5 backoff. mqtt.js's own fixed-period reconnect is off
// (reconnectPeriod 0); we reconnect with the client's own stores so unacknowledged QoS 1 publishes are resent.
// Notifications are not held while disconnected (docs/transports.md "Notifications while offline"): mqtt.js would
// keep every offline publish in memory (its outgoing store for QoS 1, its queue for QoS 0 unless queueQoSZero is
// false) and replay them all at the CONNACK. A QoS 1 publish made while disconnected waits here, not in mqtt.js's
// store, until the next CONNACK: one whose sender gave up (a request that timed out) can then be taken back
// before it reaches a peer that would run it for nobody.
import type { IClientOptions, MqttClient } from 'mqtt';
import type { Logger } from '../../kernel/ports.ts';
import { loadMqtt } from './load.ts';
import { backoffDelay } from './backoff.ts';
import type { MqttSettings } from './options.ts';
import type { MqttProps } from './envelope.ts';
import { timerDelay } from '../../protocol/delay.ts';
import { ClawError } from '../../protocol/errors.ts';

/**
 * QoS 1 publishes (replies, presence, requests to peers) that may wait unacknowledged while disconnected; past it
 * a publish fails at once instead of growing memory for as long as the outage lasts.
 */
export const MAX_HELD_PUBLISHES = 1000;
/**
 * Their bytes (topic + payload): 1000 publishes of 256 KB would be 256 MB, all the memory of a small board. One
 * publish larger than this is still kept when nothing else waits (a reply up to the 4 MiB frame limit).
 */
export const MAX_HELD_BYTES = 8 * 1024 * 1024;

interface Waiting {
  topic: string;
  payload: string;
  opts: { qos: 1; retain: boolean; properties?: ReturnType<typeof toPacketProps> };
  bytes: number;
  resolve(): void;
  reject(e: Error): void;
  unlisten(): void;
  /** The sender's; aborted once mqtt.js has the publish, it is taken out of mqtt.js's outgoing store. */
  signal?: AbortSignal;
}

export interface ConnectionConfig {
  settings: MqttSettings;
  clientId: string;
  /** false: persistent session (the broker keeps subscriptions and queues QoS 1 messages while we are away). */
  clean: boolean;
  /** Session Expiry Interval for MQTT 5 (seconds); ignored by 3.1.1 where a non-clean session never expires. */
  sessionExpirySeconds?: number;
  password?: string;
  ca?: string;
  will?: { topic: string; payload: string; retain: boolean };
  log: Logger;
  onMessage(topic: string, payload: Uint8Array, props: MqttProps | undefined): void;
  /** How long one connection attempt waits for its CONNACK; default: the settings' (connect_timeout_ms). */
  connectTimeoutMs?: number;
  /** MQTT 5 Maximum Packet Size (§3.1.2.11.4): the broker discards larger messages instead of delivering them. */
  maxPacketBytes?: number;
  /** Each successful CONNACK (first connect and every reconnect). */
  onConnect?(sessionPresent: boolean): void;
}

export class MqttConnection {
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private closing = false;
  private readonly filters = new Set<string>();
  private readyWaiters: { resolve: () => void; reject: (e: Error) => void }[] = [];
  private lastErrorLogged = '';
  /** Notifications dropped in the current outage (reported at the next CONNACK). */
  private dropped = 0;
  /** QoS 1 publishes whose PUBACK (or failure) has not come yet, and their bytes (waiting ones included). */
  private held = 0;
  private heldBytes = 0;
  /** Published while disconnected, in order: handed to mqtt.js at the next CONNACK. */
  private waiting: Waiting[] = [];
  private refusedThisOutage = 0;

  private constructor(
    private readonly client: MqttClient,
    private readonly cfg: ConnectionConfig,
  ) {}

  /** Start connecting; resolves once the client exists (not once connected: see ready()). */
  static async open(cfg: ConnectionConfig): Promise<MqttConnection> {
    const { Client, net, tls } = await loadMqtt();
    const s = cfg.settings;
    const e = s.endpoint;
    const stream = () => {
      const sock = e.tls
        ? tls.connect({ host: e.host, port: e.port, ca: cfg.ca, servername: net.isIP(e.host) ? undefined : e.host, rejectUnauthorized: s.tlsVerify })
        : net.connect({ host: e.host, port: e.port });
      // Nagle's delay turns every request/response into ~40-90 ms (ARCHITECTURE: measured with aedes).
      sock.setNoDelay(true);
      return sock;
    };
    const v5 = s.protocolVersion === 5;
    const options: IClientOptions = {
      protocolVersion: s.protocolVersion,
      clientId: cfg.clientId,
      clean: cfg.clean,
      keepalive: s.keepaliveSeconds,
      reconnectPeriod: 0,
      connectTimeout: cfg.connectTimeoutMs ?? s.connectTimeoutMs,
      resubscribe: false,
      // A QoS 0 publish that finds the client disconnected fails instead of waiting in mqtt.js's unbounded queue.
      queueQoSZero: false,
      username: s.username,
      password: cfg.password,
      properties: v5
        ? {
            ...(cfg.clean ? {} : { sessionExpiryInterval: cfg.sessionExpirySeconds ?? s.sessionExpirySeconds }),
            ...(cfg.maxPacketBytes ? { maximumPacketSize: cfg.maxPacketBytes } : {}),
          }
        : undefined,
      will: cfg.will && { topic: cfg.will.topic, payload: Buffer.from(cfg.will.payload), qos: 1, retain: cfg.will.retain },
    };
    const client = new Client(stream, options);
    const conn = new MqttConnection(client, cfg);
    conn.wire();
    return conn;
  }

  private wire(): void {
    const c = this.client;
    c.on('connect', (ack) => {
      this.attempt = 0;
      this.lastErrorLogged = '';
      const sessionPresent = Boolean(ack.sessionPresent);
      const outage = this.dropped > 0 ? { dropped_notifications: this.dropped } : {};
      const refused = this.refusedThisOutage > 0 ? { refused_publishes: this.refusedThisOutage } : {};
      this.dropped = 0;
      this.refusedThisOutage = 0;
      this.cfg.log.info('mqtt connected', { client_id: this.cfg.clientId, session_present: sessionPresent, ...outage, ...refused });
      // Subscribing again is idempotent; it also covers a broker that lost our session (restart without persistence).
      if (this.filters.size > 0) c.subscribe([...this.filters], { qos: 1 }, (err) => err && this.cfg.log.warn('mqtt subscribe failed', { error: err.message }));
      for (const w of this.waiting.splice(0)) {
        w.unlisten();
        this.send(w);
      }
      for (const w of this.readyWaiters.splice(0)) w.resolve();
      this.cfg.onConnect?.(sessionPresent);
    });
    c.on('message', (topic, payload, packet) => {
      // Thrown inside mqtt.js's packet handler, an error would end the connection and the broker would redeliver
      // the same message after the reconnect, forever: a message that cannot be handled is dropped instead.
      try {
        this.cfg.onMessage(topic, payload, packet.properties as MqttProps | undefined);
      } catch (err) {
        this.cfg.log.warn('mqtt message dropped', { topic: topic.slice(0, 200), bytes: payload.length, error: (err as Error).message });
      }
    });
    c.on('error', (err: Error & { code?: unknown }) => {
      // Repeated identical failures while the broker is down are logged once per outage.
      const key = `${err.code}:${err.message}`;
      if (key !== this.lastErrorLogged) this.cfg.log.warn('mqtt connection error', { client_id: this.cfg.clientId, code: err.code, error: err.message });
      this.lastErrorLogged = key;
      // Refused credentials and an untrusted certificate will not fix themselves: whoever waits for ready() hears
      // it now (the connection itself keeps retrying with backoff, for an operator who fixes the broker).
      if (isPermanent(err.code)) for (const w of this.readyWaiters.splice(0)) w.reject(err);
    });
    c.on('close', () => this.scheduleReconnect());
  }

  private scheduleReconnect(): void {
    if (this.closing || this.timer) return;
    const delay = backoffDelay(this.attempt++, this.cfg.settings.backoff);
    this.cfg.log.debug('mqtt reconnect scheduled', { delay_ms: delay, attempt: this.attempt });
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.closing) return;
      // Keep the stores: unacknowledged outgoing QoS 1 packets are resent after the new CONNACK.
      const c = this.client as MqttClient & { incomingStore: unknown; outgoingStore: unknown };
      c.reconnect({ incomingStore: c.incomingStore, outgoingStore: c.outgoingStore } as never);
    }, timerDelay(delay));
    // Not unref'd: while the broker is away this timer is all that keeps a listening agent alive; close() clears it.
  }

  get connected(): boolean {
    return this.client.connected;
  }

  /** Resolves at the next CONNACK (now, if connected); rejects on refused credentials or after `timeoutMs`. */
  ready(timeoutMs: number): Promise<void> {
    if (this.client.connected) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => {
        this.readyWaiters = this.readyWaiters.filter((w) => w !== waiter);
        reject(new Error(`no connection to the MQTT broker within ${timeoutMs} ms`));
      }, timerDelay(timeoutMs));
      const waiter = {
        resolve: () => (clearTimeout(t), resolve()),
        reject: (e: Error) => (clearTimeout(t), reject(e)),
      };
      this.readyWaiters.push(waiter);
    });
  }

  /**
   * QoS 1 publish; resolves at PUBACK. While disconnected it waits and is sent after reconnecting, up to
   * MAX_HELD_PUBLISHES / MAX_HELD_BYTES unacknowledged; past that it fails at once (ClawError 'unreachable').
   * `signal`: aborted while the publish still waits for the broker, it is dropped (rejected 'cancelled'). Aborted
   * after mqtt.js took it but before its PUBACK, it is taken out of mqtt.js's outgoing store (rejected): mqtt.js
   * would otherwise send it again after a reconnect, for a peer to run a request whose caller has its timeout.
   * The broker may have it already (a lost PUBACK); that copy cannot be taken back.
   */
  publish(topic: string, payload: string, opts: { retain?: boolean; props?: MqttProps; signal?: AbortSignal } = {}): Promise<void> {
    const bytes = Buffer.byteLength(topic) + Buffer.byteLength(payload);
    if (opts.signal?.aborted) return Promise.reject(new ClawError('cancelled', 'MQTT publish cancelled before it was sent'));
    if (!this.client.connected && this.held > 0 && (this.held >= MAX_HELD_PUBLISHES || this.heldBytes + bytes > MAX_HELD_BYTES)) {
      if (this.refusedThisOutage++ === 0) {
        this.cfg.log.warn('mqtt publishes refused while disconnected: too many waiting', { client_id: this.cfg.clientId, held: this.held, held_bytes: this.heldBytes, limit: MAX_HELD_PUBLISHES, limit_bytes: MAX_HELD_BYTES });
      }
      return Promise.reject(new ClawError('unreachable', `MQTT broker unreachable and ${this.held} publishes (${this.heldBytes} bytes) already waiting`));
    }
    this.held++;
    this.heldBytes += bytes;
    const properties = opts.props && this.cfg.settings.protocolVersion === 5 ? toPacketProps(opts.props) : undefined;
    return new Promise((resolve, reject) => {
      const w: Waiting = { topic, payload, opts: { qos: 1, retain: opts.retain ?? false, properties }, bytes, resolve, reject, unlisten: () => {}, signal: opts.signal };
      if (this.client.connected) return this.send(w);
      const signal = opts.signal;
      if (signal) {
        const onAbort = () => {
          const i = this.waiting.indexOf(w);
          if (i < 0) return;
          this.waiting.splice(i, 1);
          this.release(w);
          reject(new ClawError('cancelled', 'MQTT publish dropped: its sender gave up while the broker was unreachable'));
        };
        signal.addEventListener('abort', onAbort, { once: true });
        w.unlisten = () => signal.removeEventListener('abort', onAbort);
      }
      this.waiting.push(w);
    });
  }

  private send(w: Waiting): void {
    const c = this.client;
    const before = c.getLastMessageId();
    let unlisten = () => {};
    c.publish(w.topic, w.payload, w.opts, (err) => {
      unlisten();
      this.release(w);
      if (err) w.reject(err);
      else w.resolve();
    });
    // mqtt.js gives the packet its id at once when it sends now; one it queued behind its store has none yet
    // (the id did not move), and an abort cannot reach it.
    const id = c.getLastMessageId();
    const signal = w.signal;
    if (!signal || id === before || id === undefined) return;
    // Until the callback ran the id is ours: mqtt.js frees it at the PUBACK or the removal.
    const onAbort = () => c.removeOutgoingMessage(id);
    signal.addEventListener('abort', onAbort, { once: true });
    unlisten = () => signal.removeEventListener('abort', onAbort);
  }

  private release(w: Waiting): void {
    this.held--;
    this.heldBytes -= w.bytes;
  }

  /** QoS 1 publishes not yet acknowledged (waiting for the broker or for their PUBACK) and their bytes. */
  get pending(): { publishes: number; bytes: number } {
    return { publishes: this.held, bytes: this.heldBytes };
  }

  /**
   * Fire-and-forget QoS 0 publish for notifications (heartbeats, progress): a stale one is worth nothing, so while
   * disconnected it is dropped and counted (logged once per outage, the count at the next CONNACK). False: dropped.
   */
  publishVolatile(topic: string, payload: string): boolean {
    if (!this.client.connected) {
      if (this.dropped++ === 0) this.cfg.log.warn('mqtt notifications dropped while disconnected', { client_id: this.cfg.clientId });
      return false;
    }
    // queueQoSZero is off: should the socket go in the meantime, mqtt.js reports it here instead of queueing.
    this.client.publish(topic, payload, { qos: 0 }, (err) => {
      if (err) this.dropped++;
    });
    return true;
  }

  /** Subscribe with QoS 1 now (if connected) and after every reconnect. */
  subscribe(filter: string): Promise<void> {
    this.filters.add(filter);
    if (!this.client.connected) return Promise.resolve();
    return new Promise((resolve, reject) => this.client.subscribe(filter, { qos: 1 }, (err) => (err ? reject(err) : resolve())));
  }

  /**
   * Disconnect cleanly (no Last Will). `endSession` (MQTT 5) sets the Session Expiry to 0 so the broker forgets
   * a throwaway requester's session. Forced after `graceMs` when the broker does not answer.
   */
  async close(opts: { endSession?: boolean; graceMs?: number } = {}): Promise<void> {
    this.closing = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (const w of this.readyWaiters.splice(0)) w.reject(new Error('MQTT connection closed'));
    for (const w of this.waiting.splice(0)) {
      w.unlisten();
      this.release(w);
      w.reject(new ClawError('unreachable', 'MQTT connection closed before the broker was reachable: not sent'));
    }
    const c = this.client;
    await new Promise<void>((resolve) => {
      const force = setTimeout(() => c.end(true, {}, () => resolve()), timerDelay(opts.graceMs ?? 1000));
      const props = opts.endSession && this.cfg.settings.protocolVersion === 5 ? { properties: { sessionExpiryInterval: 0 } } : {};
      c.end(false, props, () => {
        clearTimeout(force);
        resolve();
      });
    });
  }
}

function toPacketProps(p: MqttProps): { responseTopic?: string; correlationData?: Buffer } {
  return {
    responseTopic: p.responseTopic,
    correlationData: p.correlationData ? Buffer.from(p.correlationData) : undefined,
  };
}

/** CONNACK refusals for credentials (3.1.1: 4, 5; MQTT 5: 0x86, 0x87) and TLS verification failures. */
function isPermanent(code: unknown): boolean {
  if (typeof code === 'number') return [4, 5, 134, 135].includes(code);
  return typeof code === 'string' && /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|ERR_TLS/.test(code);
}
