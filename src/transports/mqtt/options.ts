// MQTT options: claw.runtime.yaml's transport entry (valibot schema, for the `transports:` section), overridden by
// the URL's query parameters. Decisions are documented in docs/transports.md (MQTT section).
import * as v from 'valibot';
import { lazySchema } from '../../manifest/schema/helpers.ts';
import { ClawError } from '../../protocol/errors.ts';
import type { MqttEndpoint } from './endpoint.ts';
import { DEFAULT_TOPIC_PREFIX, isTopicSegment } from './topics.ts';
import { PROFILE_BACKOFF, type BackoffOptions } from './backoff.ts';

/** Built inside the lazy schemas below, not at import. */
const positiveInt = () => v.pipe(v.number(), v.integer(), v.minValue(1));

/** The `mqtt:` block of a transport entry in claw.runtime.yaml. Every key optional. */
export const mqttOptionsSchema = lazySchema(() => v.strictObject({
  /** 5 (default) or 4 (= MQTT 3.1.1: reply route in a payload envelope). */
  protocol_version: v.optional(v.picklist([4, 5])),
  /** Stable id so the broker keeps the session (and queued QoS 1 requests) across restarts. */
  client_id: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(256))),
  username: v.optional(v.pipe(v.string(), v.minLength(1))),
  /** secret_ref of the password (runtime profile §7); the value is resolved at connect time, never logged. */
  password_ref: v.optional(v.pipe(v.string(), v.minLength(1))),
  /** PEM file of the CA that signed the broker's certificate (mqtts). Relative to the config file. */
  ca_file: v.optional(v.pipe(v.string(), v.minLength(1))),
  /** Verify the broker's certificate (default true). false is for test brokers only and is logged as a warning. */
  tls_verify: v.optional(v.boolean()),
  /** MQTT 5 Session Expiry Interval in seconds (default 86400): how long the broker queues requests while we are down. */
  session_expiry_s: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  keepalive_s: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(65535))),
  /** How long a connection attempt waits for the broker's CONNACK (default 10000); raise it for slow links. */
  connect_timeout_ms: v.optional(positiveInt()),
  /** fsync each journal append (survives power loss, costs a disk flush per message); default false. */
  fsync: v.optional(v.boolean()),
  /** First topic level (default `claw`). */
  topic_prefix: v.optional(v.pipe(v.string(), v.check(isTopicSegment, 'must be one topic level'))),
  /** Reconnect backoff (runtime profile §5 defaults 1000 / 30000). */
  reconnect: v.optional(v.strictObject({ initial_delay_ms: v.optional(positiveInt()), max_delay_ms: v.optional(positiveInt()) })),
}));
export type MqttOptionsInput = v.InferOutput<typeof mqttOptionsSchema>;

export interface MqttSettings {
  endpoint: MqttEndpoint;
  protocolVersion: 4 | 5;
  clientId?: string;
  username?: string;
  passwordRef?: string;
  caFile?: string;
  tlsVerify: boolean;
  sessionExpirySeconds: number;
  keepaliveSeconds: number;
  connectTimeoutMs: number;
  prefix: string;
  backoff: BackoffOptions;
  fsync: boolean;
}

export const DEFAULT_SESSION_EXPIRY_S = 86_400;
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/** Defaults, then claw.runtime.yaml's `mqtt:` block, then the URL's query parameters (as the fs transport does). */
export function resolveMqttSettings(endpoint: MqttEndpoint, cfg: MqttOptionsInput = {}): MqttSettings {
  const q = endpoint.query;
  const known = new Set(['protocol', 'client_id', 'password_ref', 'ca', 'tls_verify', 'session_expiry', 'keepalive', 'prefix']);
  for (const k of Object.keys(q)) if (!known.has(k)) throw new ClawError('usage', `unknown MQTT URL parameter "${k}" (known: ${[...known].join(', ')})`);
  const qProto = q.protocol === undefined ? undefined : q.protocol === '5' ? 5 : q.protocol === '4' || q.protocol === '3.1.1' ? 4 : bad('protocol', '5, 4 or 3.1.1');
  const int = (name: string) => {
    const s = q[name];
    if (s === undefined) return undefined;
    const n = Number(s);
    return Number.isInteger(n) && n >= 0 && s.trim() !== '' ? n : bad(name, 'a non-negative integer');
  };
  const qVerify = q.tls_verify === undefined ? undefined : q.tls_verify === 'false' ? false : q.tls_verify === 'true' ? true : bad('tls_verify', 'true or false');
  const prefix = q.prefix ?? cfg.topic_prefix ?? DEFAULT_TOPIC_PREFIX;
  if (!isTopicSegment(prefix)) bad('prefix', 'one topic level');
  const backoff = {
    initialDelayMs: cfg.reconnect?.initial_delay_ms ?? PROFILE_BACKOFF.initialDelayMs,
    maxDelayMs: cfg.reconnect?.max_delay_ms ?? PROFILE_BACKOFF.maxDelayMs,
  };
  return {
    endpoint,
    protocolVersion: qProto ?? cfg.protocol_version ?? 5,
    clientId: q.client_id ?? cfg.client_id,
    username: endpoint.username ?? cfg.username,
    passwordRef: q.password_ref ?? cfg.password_ref,
    caFile: q.ca ?? cfg.ca_file,
    tlsVerify: qVerify ?? cfg.tls_verify ?? true,
    sessionExpirySeconds: int('session_expiry') ?? cfg.session_expiry_s ?? DEFAULT_SESSION_EXPIRY_S,
    keepaliveSeconds: int('keepalive') ?? cfg.keepalive_s ?? 30,
    connectTimeoutMs: cfg.connect_timeout_ms ?? DEFAULT_CONNECT_TIMEOUT_MS,
    prefix,
    backoff,
    fsync: cfg.fsync ?? false,
  };
}

function bad(name: string, what: string): never {
  throw new ClawError('usage', `MQTT option ${name} must be ${what}`);
}
