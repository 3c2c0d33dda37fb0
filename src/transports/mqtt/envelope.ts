// How a JSON-RPC message rides on MQTT (docs/transports.md, MQTT section).
//
// MQTT 5 (request/response, MQTT 5 §4.10): the payload is the complete JSON-RPC message (runtime profile §6.2);
// the requester sets the Response Topic and Correlation Data properties, the agent publishes the reply to that
// topic with the same Correlation Data.
//
// MQTT 3.1.1 has no properties, so the route travels in the payload instead, in an envelope:
//   {"claw_mqtt":1,"reply_to":"claw/home/_reply/c1","request_id":"<uuid>","message":{...JSON-RPC...}}
// and the reply comes back as {"claw_mqtt":1,"request_id":"<uuid>","message":{...}}. A bare JSON-RPC payload
// (no envelope, no properties) is accepted too; its reply goes to the agent's outbox.
//
// request_id (correlation) identifies one logical request across QoS 1 redeliveries and sender retries; the
// agent deduplicates on it (dedup.ts).

import { DEFAULT_MAX_DEPTH, textNestsDeeperThan } from '../../protocol/depth.ts';

export const ENVELOPE_MARK = 'claw_mqtt';

export interface MqttProps {
  responseTopic?: string;
  correlationData?: Uint8Array;
}

export interface InboundRequest {
  /** The JSON-RPC text handed to the router. */
  text: string;
  replyTo?: string;
  requestId?: string;
  /** Whether the reply must be wrapped (3.1.1 envelope) or use properties (MQTT 5). */
  style: 'properties' | 'envelope' | 'bare';
}

const dec = new TextDecoder();
const enc = new TextEncoder();

/** Decode an inbound publish. Returns the text unchanged when it is not an envelope (the router reports bad JSON). */
export function decodeInbound(payload: Uint8Array, props: MqttProps | undefined): InboundRequest {
  const text = dec.decode(payload);
  if (props?.responseTopic !== undefined || props?.correlationData !== undefined) {
    return {
      text,
      replyTo: props.responseTopic,
      requestId: props.correlationData ? dec.decode(props.correlationData) : undefined,
      style: 'properties',
    };
  }
  const env = parseEnvelope(text);
  if (env) return { text: JSON.stringify(env.message), replyTo: env.reply_to, requestId: env.request_id, style: 'envelope' };
  return { text, style: 'bare' };
}

interface Envelope {
  reply_to?: string;
  request_id?: string;
  message: unknown;
}

function parseEnvelope(text: string): Envelope | undefined {
  // Cheap test first: a JSON-RPC message never carries our mark, so most payloads skip the second parse.
  if (!text.includes(`"${ENVELOPE_MARK}"`)) return undefined;
  // Scanned before parsing: re-serialising `message` recurses, so a deep one would overflow the stack. Left as a
  // bare payload, the router refuses it like any frame past the depth limit (protocol/depth.ts).
  if (textNestsDeeperThan(text, DEFAULT_MAX_DEPTH + 1)) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const o = v as Record<string, unknown>;
  if (o[ENVELOPE_MARK] !== 1 || !('message' in o)) return undefined;
  return {
    message: o.message,
    reply_to: typeof o.reply_to === 'string' && o.reply_to !== '' ? o.reply_to : undefined,
    request_id: typeof o.request_id === 'string' && o.request_id !== '' ? o.request_id : undefined,
  };
}

export interface OutboundPublish {
  payload: string;
  props?: MqttProps;
}

/** A request from a requester: properties on MQTT 5, envelope on 3.1.1. */
export function encodeRequest(message: unknown, route: { replyTo: string; requestId: string }, v5: boolean): OutboundPublish {
  if (v5) return { payload: JSON.stringify(message), props: { responseTopic: route.replyTo, correlationData: enc.encode(route.requestId) } };
  return { payload: JSON.stringify({ [ENVELOPE_MARK]: 1, reply_to: route.replyTo, request_id: route.requestId, message }) };
}

/** A reply in the style the request came in. */
export function encodeReply(replyText: string, req: Pick<InboundRequest, 'style' | 'requestId'>): OutboundPublish {
  if (req.style === 'properties') return { payload: replyText, props: req.requestId !== undefined ? { correlationData: enc.encode(req.requestId) } : undefined };
  if (req.style === 'envelope') return { payload: `{"${ENVELOPE_MARK}":1,"request_id":${JSON.stringify(req.requestId ?? null)},"message":${replyText}}` };
  return { payload: replyText };
}

/** What a requester reads from a reply: the correlation and the JSON-RPC message text. */
export function decodeReply(payload: Uint8Array, props: MqttProps | undefined): { requestId?: string; text: string } {
  if (props?.correlationData) return { requestId: dec.decode(props.correlationData), text: dec.decode(payload) };
  const text = dec.decode(payload);
  const env = parseEnvelope(text);
  if (env) return { requestId: env.request_id, text: JSON.stringify(env.message) };
  return { text };
}
