// The agent side of the MQTT bridge (spec §9.2 "Message Queue", runtime profile §6.2): a Transport that serves the
// agent's inbox `{prefix}/{swarm}/{agent}/inbox` with QoS 1 on a persistent session (stable client id, clean
// false, MQTT 5 session expiry) so requests published while the agent was down arrive when it comes back.
// Replies follow the request's route (envelope.ts); a redelivered request_id is answered from the stored reply
// (dedup.ts), also across restarts when a journal is given (journal.ts: a request acknowledged but never answered
// is answered "interrupted", not run again). Presence is a retained document with a Last Will (presence.ts).
// docs/transports.md has the details.
import type { InboundFrame, Logger, Transport } from '../../kernel/ports.ts';
import type { JsonRpcMessage } from '../../protocol/jsonrpc.ts';
import { DEFAULT_MAX_FRAME_BYTES } from '../../protocol/framing.ts';
import { UNPARSED_DEPTH, textNestsDeeperThan } from '../../protocol/depth.ts';
import { ClawError, isNotExecuted } from '../../protocol/errors.ts';
import { MqttConnection } from './connection.ts';
import { decodeInbound, encodeReply, type InboundRequest, type MqttProps } from './envelope.ts';
import { DEFAULT_REPLY_WINDOW_MS, ReplyCache } from './dedup.ts';
import type { RequestJournal } from './journal.ts';
import { interruptedReply } from './interrupted.ts';
import { nodeCrypto } from '../../node/lazy.ts';
import { systemClock } from '../../node/clock.ts';
import { WallAges } from '../../kernel/wall-age.ts';
import { MqttSwarmLink } from './link.ts';
import { presencePayload, type PresenceStatus } from './presence.ts';
import { agentTopics, isReplyTopic } from './topics.ts';
import { describeEndpoint } from './endpoint.ts';
import type { MqttSettings } from './options.ts';
import { timerDelay } from '../../protocol/delay.ts';
import { backoffDelay } from './backoff.ts';

/**
 * First retry of journal records that failed (disk full), doubling to JOURNAL_RETRY_MAX_MS while they keep
 * failing: the same first delay as the fs transport's reply retry (REPLY_RETRY_MS), then backing off, as a disk
 * that stays full would otherwise be hit every 2 s for as long as it stays full.
 */
export const JOURNAL_RETRY_MS = 2000;
export const JOURNAL_RETRY_MAX_MS = 30_000;

export interface MqttTransportOptions {
  settings: MqttSettings;
  log: Logger;
  /** Resolved password (from the secret_ref); never logged. */
  password?: string;
  /** PEM text of the CA (settings.caFile, read by the caller). */
  ca?: string;
  maxFrameBytes?: number;
  /** Wall-clock milliseconds (default Date.now): the journal's stamps, which outlive a restart. */
  now?: () => number;
  /**
   * Monotonic milliseconds (default the host's): the reply window of what this process stamped, so a step of
   * the wall clock (NTP's first answer on a board without RTC) does not expire it early and run a retry twice.
   */
  monotonic?: () => number;
  /** Requests and replies kept across restarts (journal.ts); without it both live in memory only. */
  journal?: RequestJournal;
  replyWindowMs?: number;
  /** How long close() waits for replies to frames already delivered (default 30 s, the shutdown drain). */
  drainMs?: number;
}

export interface MqttTransport extends Transport {
  /** Requests to peers and presence, over this transport's connection (for the swarm). */
  readonly link: MqttSwarmLink;
  /** Announce `busy` / `ready` (retained). */
  setPresence(status: Exclude<PresenceStatus, 'offline'>, info?: Record<string, unknown>): Promise<void>;
  /** Resolves at the first CONNACK (tests, `claw run` logs). */
  ready(timeoutMs: number): Promise<void>;
}

export async function createMqttTransport(o: MqttTransportOptions): Promise<MqttTransport> {
  const s = o.settings;
  const e = s.endpoint;
  if (!e.agent) throw new ClawError('usage', `${describeEndpoint(e)}: listening needs an agent name (mqtt://host/{swarm}/{agent})`);
  const agent = e.agent;
  const topics = agentTopics(e.swarm, agent, s.prefix);
  const clientId = agentClientId(s);
  const limit = o.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  const now = o.now ?? Date.now;
  const monotonic = o.monotonic ?? systemClock.monotonic;
  const windowMs = o.replyWindowMs ?? DEFAULT_REPLY_WINDOW_MS;
  const cache = new ReplyCache(monotonic, windowMs);
  let deliver: ((f: InboundFrame) => void) | undefined;
  const backlog: InboundFrame[] = [];
  let status: Exclude<PresenceStatus, 'offline'> = 'ready';
  let info: Record<string, unknown> | undefined;
  let open = true;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((r) => (resolveClosed = r));
  let link!: MqttSwarmLink;
  // Frames delivered but not yet answered: close() keeps the connection until they are (contract: replies to
  // frames delivered before close still arrive), at most `drainMs`.
  let unanswered = 0;
  let drained: (() => void) | undefined;

  // A journal write that fails (disk full) is logged and the work goes on: the PUBACK goes out regardless, so
  // dropping the request or holding back its reply would lose it outright; only its survival of a crash is lost.
  const journalWrite = (what: string, fields: Record<string, unknown>, write: (j: RequestJournal) => void) => {
    if (!o.journal) return;
    try {
      write(o.journal);
    } catch (err) {
      o.log.error(`mqtt request journal not written: ${what}`, { journal: o.journal.file, ...fields, error: (err as Error).message, retry_ms: JOURNAL_RETRY_MS });
    }
    scheduleCatchUp();
  };
  // A record that failed stays in the journal's memory (journal.ts) and is written again here, while the
  // transport is open: above all a reply's `done`, without which a crash would answer a request already
  // answered `interrupted` at the next start. Also tried after every later append, and once more at close.
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let retryAttempt = 0;
  const lagging = (j: RequestJournal) => {
    const u = j.unwritten();
    return u.overflow || u.keys.length > 0;
  };
  const scheduleCatchUp = () => {
    const j = o.journal;
    if (!j || retryTimer || !open) return;
    if (!lagging(j)) {
      retryAttempt = 0;
      return;
    }
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      const before = j.unwritten().keys.length;
      try {
        j.flush();
        o.log.info('mqtt request journal caught up', { journal: j.file, records: before, attempts: retryAttempt + 1 });
        retryAttempt = 0;
      } catch (err) {
        retryAttempt++;
        o.log.debug('mqtt request journal still not written', { journal: j.file, unwritten: before, error: (err as Error).message });
      }
      scheduleCatchUp();
    }, backoffDelay(retryAttempt, { initialDelayMs: JOURNAL_RETRY_MS, maxDelayMs: JOURNAL_RETRY_MAX_MS }));
    // The connection keeps the process alive while the transport is open; this timer must not after it.
    retryTimer.unref?.();
  };
  /** The last try at close: what is still unwritten is answered `interrupted` at the next start (docs). */
  const closeJournal = () => {
    const j = o.journal;
    if (!j) return;
    clearTimeout(retryTimer);
    retryTimer = undefined;
    try {
      j.flush();
    } catch (err) {
      const u = j.unwritten();
      o.log.error('mqtt request journal records unwritten at close: a restart answers those requests interrupted', {
        journal: j.file,
        unwritten: u.overflow ? 'more than fit in memory' : u.keys.length,
        request_ids: u.keys.filter((k) => !k.startsWith('auto:')).slice(0, 20),
        error: (err as Error).message,
      });
    }
    j.close();
  };
  // A reply route is the requester's choice among the swarm's `_reply` topics (topics.ts isReplyTopic).
  const badRoute = (req: InboundRequest) => req.replyTo !== undefined && !isReplyTopic(req.replyTo, e.swarm, s.prefix);
  const publishReply = (req: InboundRequest, text: string) => {
    // A journal written before the route was checked may still name one: nowhere safe to answer.
    if (badRoute(req)) return o.log.warn('mqtt reply dropped: reply route is not a reply topic', { request_id: req.requestId });
    const out = encodeReply(text, req);
    conn.publish(req.replyTo ?? topics.outbox, out.payload, { props: out.props }).catch((err: Error) => o.log.warn('mqtt reply not published', { error: err.message }));
  };

  /** Hand one request to the router (now, or at start()); `key` names it in the journal. */
  const dispatch = (req: InboundRequest, key: string, bytes: number) => {
    // Only frames the router answers count (a notification gets no reply).
    const notification = bytes <= limit && !expectsReply(req.text);
    let answered = notification;
    if (!answered) unanswered++;
    const frame: InboundFrame = {
      payload: bytes > limit ? { error: 'oversize', bytes, limit } : { text: req.text },
      reply(message: JsonRpcMessage | JsonRpcMessage[]) {
        if (!answered) {
          answered = true;
          if (--unanswered === 0) drained?.();
        }
        const text = JSON.stringify(message);
        // Only executed work is a request_id's idempotency result (profile §5): a refusal is answered, not kept.
        if (req.requestId !== undefined) {
          if (refusedUnrun(message)) cache.release(req.requestId, [text]);
          else cache.complete(req.requestId, [text]);
        }
        // Stored before it is published: a crash in between re-publishes it after the restart. Published even when
        // storing fails: the work is done, and the requester is waiting for its answer.
        journalWrite('reply published without a stored copy', { request_id: req.requestId }, (j) => j.done({ k: key, at: now(), replies: req.requestId !== undefined ? [text] : [] }));
        publishReply(req, text);
      },
    };
    if (deliver) deliver(frame);
    else backlog.push(frame);
    // A notification is finished once delivered (nothing to store); a request's record ends with its reply.
    if (notification) journalWrite('notification delivered', {}, (j) => j.done({ k: key, at: now(), replies: [] }));
  };

  const onRequest = (payload: Uint8Array, props: MqttProps | undefined) => {
    // After close() nothing more is delivered. Such a message was already acknowledged to the broker: it is lost
    // unless its sender retries (same request_id). The window is the few ms between close() and DISCONNECT.
    if (!open) return;
    // Oversize is decided before the payload is decoded: only an MQTT 5 route (packet properties) survives it; an
    // envelope's route would need the whole payload parsed, so its refusal goes to the outbox.
    const req = decodeInbound(payload.length > limit ? new Uint8Array(0) : payload, props);
    if (badRoute(req)) return o.log.warn('mqtt request dropped: reply route is not a reply topic', { request_id: req.requestId, bytes: Buffer.byteLength(req.replyTo!) });
    const key = req.requestId;
    if (key !== undefined && cache.admit(key, (replies) => replies.forEach((r) => publishReply(req, r))) === 'duplicate') {
      o.log.debug('mqtt duplicate request answered from the stored reply', { request_id: key });
      return;
    }
    const jkey = key ?? `auto:${nodeCrypto().randomUUID()}`;
    // Journaled synchronously here, before mqtt.js sends the PUBACK (it emits 'message' first).
    if (payload.length <= limit) journalWrite('request handled without a record (a crash before its reply loses it)', { request_id: key }, (j) => j.request({ k: jkey, at: now(), req }));
    dispatch(req, jkey, payload.length);
  };

  // Before connecting: the previous run's stored replies answer redeliveries, and the requests it acknowledged
  // but never answered (it crashed mid-request) get the interrupted error, not a second run (interrupted.ts).
  const interrupted: { req: InboundRequest; text: string }[] = [];
  if (o.journal) {
    // A journal that cannot be rewritten (disk full) stays in use as it is: the agent starts.
    const { pending, done } = o.journal.load(now(), windowMs, (err) => o.log.warn('mqtt request journal warning', { journal: o.journal?.file, error: err.message }));
    // The stored replies' wall stamps, turned into this process's monotonic time by their age (kernel/wall-age.ts).
    const age = new WallAges({ now, monotonic }).ages();
    for (const d of done) if (!d.replies.some(refusedUnrunText)) cache.preload(d.k, d.replies, monotonic() - age(d.at));
    for (const p of pending) {
      const text = interruptedReply(p.req.text, p.req.requestId);
      if (p.req.requestId !== undefined) cache.preload(p.req.requestId, text ? [text] : [], monotonic());
      // Unrecorded, it is answered interrupted again after the next restart: the same answer, nothing run.
      journalWrite('interrupted answer', { request_id: p.req.requestId }, (j) => j.done({ k: p.k, at: now(), replies: text && p.req.requestId !== undefined ? [text] : [] }));
      if (text) interrupted.push({ req: p.req, text });
    }
    if (pending.length > 0) o.log.warn('mqtt requests interrupted by a restart answered as interrupted, not run again', { count: pending.length });
  }

  const conn: MqttConnection = await MqttConnection.open({
    settings: s,
    clientId,
    clean: false,
    // Room over the frame limit for the topic and properties, so a frame just over it is still answered "oversize".
    maxPacketBytes: limit + 262_144,
    password: o.password,
    ca: o.ca,
    will: { topic: topics.status, payload: presencePayload({ status: 'offline', agent, swarm: e.swarm }), retain: true },
    log: o.log,
    onMessage(topic, payload, props) {
      if (topic === topics.inbox) onRequest(payload, props);
      else link.handle(topic, payload, props);
    },
    onConnect() {
      // Every (re)connect re-announces: the Last Will may have replaced our document while we were away.
      link.publishPresence(status, info).catch((err: Error) => o.log.warn('mqtt presence not published', { error: err.message }));
    },
  });
  link = new MqttSwarmLink({ connection: conn, swarm: e.swarm, prefix: s.prefix, protocolVersion: s.protocolVersion, clientId, agent });
  await conn.subscribe(topics.inbox);
  await link.start();
  for (const i of interrupted) publishReply(i.req, i.text);
  o.log.info('mqtt transport listening', { broker: describeEndpoint(e), inbox: topics.inbox, client_id: clientId, protocol: s.protocolVersion === 5 ? '5' : '3.1.1' });

  return {
    name: 'mqtt',
    closed,
    link,
    start(fn) {
      deliver = fn;
      for (const f of backlog.splice(0)) fn(f);
    },
    notify(message) {
      if (!open) return;
      // A heartbeat (spec §9.3.1: the next one supersedes it) is QoS 0 and dropped while offline: queued, an outage
      // would grow memory by one per heartbeat and end in a burst of stale ones (docs/transports.md). Any other
      // notification (an approval request waits for an answer) keeps QoS 1 and the bounded offline hold.
      if (!('id' in message) && message.method === 'claw.heartbeat') return void conn.publishVolatile(topics.outbox, JSON.stringify(message));
      conn.publish(topics.outbox, JSON.stringify(message)).catch((err: Error) => o.log.debug('mqtt notification not published', { error: err.message }));
    },
    async setPresence(next, nextInfo) {
      status = next;
      info = nextInfo ?? info;
      // Offline, the next CONNACK announces the latest state (onConnect): queueing each change would replay them all.
      if (!conn.connected) return;
      await link.publishPresence(status, info);
    },
    ready: (ms) => conn.ready(ms),
    async close() {
      if (!open) return;
      open = false;
      resolveClosed();
      // A clean DISCONNECT suppresses the Last Will, so a graceful stop says `offline` itself first.
      if (conn.connected) await link.publishPresence('offline').catch(() => {});
      const disconnect = async () => {
        link.abandon();
        await conn.close();
        closeJournal();
      };
      if (unanswered === 0) return disconnect();
      // close() returns now (the router may answer after it); the connection goes once the last reply is out.
      const t = setTimeout(() => void disconnect(), timerDelay(o.drainMs ?? 30_000));
      drained = () => {
        clearTimeout(t);
        // Let the last reply's publish reach the client before DISCONNECT (end() then waits for its PUBACK).
        setTimeout(() => void disconnect(), 0);
      };
    },
  };
}

/** Every reply is an error that says nothing ran (protocol/errors.ts isNotExecuted); a batch only when all are. */
function refusedUnrun(reply: JsonRpcMessage | JsonRpcMessage[]): boolean {
  const all = Array.isArray(reply) ? reply : [reply];
  return all.length > 0 && all.every((m) => 'error' in m && m.error !== undefined && isNotExecuted(m.error.code, m.error.data));
}

/** refusedUnrun for a stored reply text (the journal keeps replies as text). */
function refusedUnrunText(text: string): boolean {
  try {
    return refusedUnrun(JSON.parse(text) as JsonRpcMessage | JsonRpcMessage[]);
  } catch {
    return false;
  }
}

/** Whether the router will answer this text: a request, a batch with one, or anything it cannot parse. */
function expectsReply(text: string): boolean {
  // Not parsed here either: the router refuses it unparsed (protocol/depth.ts).
  if (textNestsDeeperThan(text, UNPARSED_DEPTH)) return true;
  if (!text.includes('"id"')) {
    try {
      JSON.parse(text);
      return false; // valid JSON without any id: a notification (or a batch of them)
    } catch {
      return true; // the router answers a parse error
    }
  }
  try {
    const v = JSON.parse(text) as unknown;
    const has = (m: unknown) => typeof m === 'object' && m !== null && 'id' in m;
    return Array.isArray(v) ? v.length === 0 || v.some(has) : has(v) || typeof v !== 'object' || v === null;
  } catch {
    return true;
  }
}

/** The agent's stable client id: the broker keys its persistent session (and queued requests) on it. */
export function agentClientId(s: MqttSettings): string {
  return s.clientId ?? `claw-${s.endpoint.swarm}-${s.endpoint.agent}`;
}
