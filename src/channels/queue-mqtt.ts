// A queue channel on an MQTT topic (docs/channels.md "MQTT"): the MQTT transport's mechanics reused — one
// connection with the profile §5 reconnect backoff and a persistent session (QoS 1, clean false, stable
// client id, so messages published while the agent is down arrive when it returns), MQTT 5 response
// topic + correlation data or the 3.1.1 envelope for the reply route (envelope.ts), and request_id
// deduplication of QoS 1 redeliveries and retries (dedup.ts ReplyCache). The topic is the Channel's
// `trigger.queue_name` unless the URL names one: `mqtt://broker:1883/some/topic`.
import type { InboundFrame, Logger, Transport } from '../kernel/ports.ts';
import type { SecretResolver } from '../kernel/secrets.ts';
import type { JsonRpcMessage } from '../protocol/jsonrpc.ts';
import { ClawError } from '../protocol/errors.ts';
import { DEFAULT_MAX_FRAME_BYTES } from '../protocol/framing.ts';
import { MqttConnection } from '../transports/mqtt/connection.ts';
import { isPublishableTopic } from '../transports/mqtt/topics.ts';
import { decodeInbound, encodeReply, type InboundRequest } from '../transports/mqtt/envelope.ts';
import { ReplyCache } from '../transports/mqtt/dedup.ts';
import { resolveMqttSettings } from '../transports/mqtt/options.ts';
import { connectionSecrets } from '../transports/mqtt/secrets.ts';
import type { MqttEndpoint } from '../transports/mqtt/endpoint.ts';
import type { ChannelBinding } from './config.ts';
import { timerDelay } from '../protocol/delay.ts';

export interface MqttQueue extends Transport {
  readonly topic: string;
  readonly replyTopic: string;
  ready(timeoutMs: number): Promise<void>;
}

/** `mqtt[s]://[user@]host[:port][/topic/levels]` → endpoint + topic (the path, else `queueName`). */
export function parseChannelMqttUrl(text: string, queueName: string): { endpoint: MqttEndpoint; topic: string } {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw new ClawError('usage', 'channel listen: not a URL');
  }
  const tls = u.protocol === 'mqtts:';
  if (!tls && u.protocol !== 'mqtt:') throw new ClawError('usage', `channel listen: expected mqtt:// or mqtts://, got ${u.protocol}`);
  if (u.password || u.searchParams.has('password')) throw new ClawError('usage', 'a password in the MQTT URL is refused: use mqtt.password_ref (a secret_ref) instead');
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (!host) throw new ClawError('usage', 'channel listen: the MQTT URL has no host');
  const path = decodeURIComponent(u.pathname.replace(/^\/+/, ''));
  const topic = path === '' ? queueName : path;
  if (/[+#\u0000]/.test(topic)) throw new ClawError('usage', `channel listen: "${topic}" cannot be a topic name (no wildcards)`);
  const query: Record<string, string> = {};
  for (const [k, val] of u.searchParams) query[k] = val;
  return {
    topic,
    endpoint: { tls, host, port: u.port ? Number(u.port) : tls ? 8883 : 1883, swarm: topic, username: u.username ? decodeURIComponent(u.username) : undefined, query },
  };
}

export async function openMqttQueue(
  channel: string,
  queueName: string,
  b: ChannelBinding,
  o: { log: Logger; baseDir: string; secrets?: SecretResolver; monotonic: () => number; maxFrameBytes?: number; drainMs?: number },
): Promise<MqttQueue> {
  const { endpoint, topic } = parseChannelMqttUrl(b.listen!, queueName);
  const settings = resolveMqttSettings(endpoint, b.mqtt);
  const { password, ca } = await connectionSecrets(settings, { secrets: o.secrets, baseDir: o.baseDir });
  const replyTopic = b.reply_topic ?? `${topic}/replies`;
  const limit = o.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  // The request_id window counts on the monotonic clock: a wall step (NTP on a board without an RTC) must not
  // close it early and run a retried request twice (docs/boards.md "Clock").
  const cache = new ReplyCache(o.monotonic);
  let deliver: ((f: InboundFrame) => void) | undefined;
  const backlog: InboundFrame[] = [];
  let open = true;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((r) => (resolveClosed = r));
  let unanswered = 0;
  let drained: (() => void) | undefined;

  // A reply route is the sender's choice (docs/channels.md: the broker's ACL says where the channel may publish),
  // but never the channel's own topic (a loop) nor a topic the broker cannot take (isPublishableTopic).
  const routeOf = (req: InboundRequest) => (req.replyTo && isPublishableTopic(req.replyTo) && req.replyTo !== topic ? req.replyTo : replyTopic);
  const publishReply = (req: InboundRequest, text: string) => {
    const out = encodeReply(text, req);
    conn.publish(routeOf(req), out.payload, { props: out.props }).catch((e: Error) => o.log.warn('channel reply not published', { channel, error: e.message }));
  };

  const onMessage = (payload: Uint8Array, props: Parameters<typeof decodeInbound>[1]) => {
    if (!open) return;
    const req = decodeInbound(payload, props);
    const key = req.requestId;
    // QoS 1 is at-least-once: a redelivered request_id gets the stored reply, it is not run again.
    if (key !== undefined && cache.admit(key, (replies) => replies.forEach((r) => publishReply(req, r))) === 'duplicate') return;
    unanswered++;
    let answered = false;
    const settle = () => {
      if (answered) return;
      answered = true;
      if (--unanswered === 0) drained?.();
    };
    const frame: InboundFrame = {
      payload: payload.length > limit ? { error: 'oversize', bytes: payload.length, limit } : { text: req.text },
      reply(message: JsonRpcMessage | JsonRpcMessage[]) {
        settle();
        const text = JSON.stringify(message);
        if (key !== undefined) cache.complete(key, [text]);
        publishReply(req, text);
      },
    };
    // A notification is never answered: it stops counting once handed over.
    if (!expectsReply(req.text)) queueMicrotask(settle);
    if (deliver) deliver(frame);
    else backlog.push(frame);
  };

  const conn = await MqttConnection.open({
    settings,
    clientId: settings.clientId ?? `claw-channel-${channel}`,
    clean: false,
    password,
    ca,
    log: o.log,
    onMessage: (t, payload, props) => t === topic && onMessage(payload, props),
  });
  await conn.subscribe(topic);
  o.log.info('channel listening on MQTT', { channel, topic, reply_topic: replyTopic });

  return {
    name: `channel:${channel}`,
    topic,
    replyTopic,
    closed,
    ready: (ms) => conn.ready(ms),
    start(fn) {
      deliver = fn;
      for (const f of backlog.splice(0)) fn(f);
    },
    notify() {
      // A channel carries no agent notifications (heartbeats go to the CKP transports).
    },
    async close() {
      if (!open) return;
      open = false;
      resolveClosed();
      if (unanswered > 0) {
        await new Promise<void>((r) => {
          const t = setTimeout(r, timerDelay(o.drainMs ?? 30_000));
          drained = () => (clearTimeout(t), setTimeout(r, 0));
        });
      }
      await conn.close();
    },
  };
}

/** Whether the channel runner answers this text: anything but a well-formed notification or response. */
function expectsReply(text: string): boolean {
  try {
    const v = JSON.parse(text) as unknown;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return true;
    return !(('method' in v && !('id' in v)) || 'result' in v || 'error' in v);
  } catch {
    return true;
  }
}
