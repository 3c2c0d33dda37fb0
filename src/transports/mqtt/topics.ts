// Topic names of the MQTT bridge: runtime profile §6.2 recommends `claw.{swarm_name}.{agent_identity}.{inbox|outbox}`
// for message queues; MQTT separates levels with `/`, so the same names become `claw/{swarm}/{agent}/{inbox|outbox}`.
// `status` (retained presence + Last Will) and `_reply/{client}` (response topics of requesters) are our additions,
// documented in docs/transports.md (MQTT section).
export const DEFAULT_TOPIC_PREFIX = 'claw';

export interface AgentTopics {
  /** Requests and notifications for the agent (it subscribes with QoS 1). */
  inbox: string;
  /** Agent-initiated notifications (claw.heartbeat) and replies to requests that named no response topic. */
  outbox: string;
  /** Retained presence document; the Last Will replaces it with `offline`. */
  status: string;
}

/** One topic level: MQTT forbids wildcards in published topic names and `/` would add a level. */
const SEGMENT = /^[^/+#\u0000]+$/;

export function isTopicSegment(s: string): boolean {
  return s.length > 0 && s.length <= 256 && SEGMENT.test(s);
}

export function agentTopics(swarm: string, agent: string, prefix = DEFAULT_TOPIC_PREFIX): AgentTopics {
  const base = `${prefix}/${swarm}/${agent}`;
  return { inbox: `${base}/inbox`, outbox: `${base}/outbox`, status: `${base}/status` };
}

/** Every agent's presence in a swarm (single-level wildcard in the agent position). */
export function presenceFilter(swarm: string, prefix = DEFAULT_TOPIC_PREFIX): string {
  return `${prefix}/${swarm}/+/status`;
}

/** Where a requester receives replies. `_reply` cannot clash with an agent's own levels (inbox/outbox/status). */
export function replyTopic(swarm: string, clientId: string, prefix = DEFAULT_TOPIC_PREFIX): string {
  return `${prefix}/${swarm}/_reply/${clientId}`;
}

/** Longest reply route accepted, in UTF-8 bytes: far below MQTT's 65,535, far above any `_reply` topic. */
export const REPLY_TOPIC_MAX_BYTES = 1024;

/**
 * Whether a requester's reply route (Response Topic or envelope `reply_to`) is one of the swarm's `_reply` topics.
 * Anything else is refused: the agent would publish with its own credentials wherever a requester names (another
 * device's command topic), and a topic the broker cannot take (U+0000, a lone surrogate, > 65,535 bytes) would be
 * resent on every reconnect.
 */
export function isReplyTopic(topic: string, swarm: string, prefix = DEFAULT_TOPIC_PREFIX): boolean {
  const head = `${prefix}/${swarm}/_reply/`;
  return topic.startsWith(head) && isPublishableTopic(topic) && isTopicSegment(topic.slice(head.length));
}

/**
 * A topic name the broker takes and the agent may publish to: no wildcard or U+0000, valid UTF-8, at most
 * REPLY_TOPIC_MAX_BYTES. A route failing this would make the broker drop the connection or mqtt.js fail to encode,
 * and the reply be resent on every reconnect.
 */
export function isPublishableTopic(topic: string): boolean {
  const bytes = Buffer.from(topic);
  // The UTF-8 round trip differs exactly when the text holds a lone surrogate (MQTT §1.5.4: not valid UTF-8).
  return topic.length > 0 && !/[+#\u0000]/.test(topic) && bytes.length <= REPLY_TOPIC_MAX_BYTES && bytes.toString() === topic;
}

/** The agent name of a `{prefix}/{swarm}/{agent}/status` topic, or undefined for any other topic. */
export function agentOfStatusTopic(topic: string, swarm: string, prefix = DEFAULT_TOPIC_PREFIX): string | undefined {
  const head = `${prefix}/${swarm}/`;
  if (!topic.startsWith(head) || !topic.endsWith('/status')) return undefined;
  const agent = topic.slice(head.length, -'/status'.length);
  return isTopicSegment(agent) ? agent : undefined;
}
