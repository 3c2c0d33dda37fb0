// Options of the HTTP transport (docs/transports.md, HTTP): claw.runtime.yaml's `transports[].http` block and the
// `http://host:port/path` URI. Secure defaults: loopback only, bounded everything (see "Limits" in the docs).
import * as v from 'valibot';
import { lazySchema } from '../../manifest/schema/helpers.ts';
import { ClawError } from '../../protocol/errors.ts';

/** Built inside the lazy schema below, not at import. */
const count = () => v.pipe(v.number(), v.integer(), v.minValue(1));
const ms = () => v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(3_600_000));
const file = () => v.pipe(v.string(), v.minLength(1));

/** The `http:` block of a transport entry in claw.runtime.yaml. Every key optional. */
export const httpOptionsSchema = lazySchema(() =>
  v.strictObject({
    auth: v.optional(
      v.strictObject({
        /** secret_refs of the accepted bearer tokens (runtime profile §7); several allow rotation. */
        bearer_token_refs: v.optional(v.pipe(v.array(v.pipe(v.string(), v.minLength(1))), v.minLength(1))),
        /**
         * Plain http on a non-loopback address carries tokens in clear text: refused unless this is true
         * (a TLS-terminating proxy in front, a private container network).
         */
        allow_plaintext: v.optional(v.boolean()),
      }),
    ),
    /** https:// only. Files are relative to the config file. */
    tls: v.optional(
      v.strictObject({
        cert_file: file(),
        key_file: file(),
        /** Require a client certificate signed by this CA (mutual TLS); counts as authentication. */
        client_ca_file: v.optional(file()),
      }),
    ),
    limits: v.optional(
      v.strictObject({
        /** Largest request body (default: limits.max_frame_bytes, 4 MiB). */
        max_body_bytes: v.optional(v.pipe(count(), v.maxValue(256 * 1024 * 1024))),
        /** All request headers must arrive within this (default 10 s): slow-header clients are cut off. */
        headers_timeout_ms: v.optional(ms()),
        /** The whole request (headers and body) must arrive within this (default 30 s). */
        request_timeout_ms: v.optional(ms()),
        /** A keep-alive connection with no request in flight is closed after this (default 5 s). */
        idle_timeout_ms: v.optional(ms()),
        /** Open connections at once (default 128); more are closed at accept. */
        max_connections: v.optional(v.pipe(count(), v.maxValue(65_536))),
        /** Open SSE streams at once (default 16). */
        max_streams: v.optional(v.pipe(count(), v.maxValue(4_096))),
        /** Requests per minute per client address (default 6000; 0 turns the limit off). */
        requests_per_minute: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
      }),
    ),
    sse: v.optional(
      v.strictObject({
        /** Agent notifications kept for `Last-Event-ID` resume (default 256). */
        buffer: v.optional(v.pipe(count(), v.maxValue(100_000))),
        /** Comment line sent on an idle stream so proxies keep it open (default 15 s). */
        keepalive_ms: v.optional(ms()),
      }),
    ),
  }),
);
export type HttpOptionsInput = v.InferOutput<typeof httpOptionsSchema>;

export interface HttpEndpoint {
  tls: boolean;
  /** The address to bind or connect to (brackets removed from IPv6). */
  host: string;
  port: number;
  /** The CKP endpoint's path (default /ckp). */
  path: string;
  query: Record<string, string>;
}

export const DEFAULT_PATH = '/ckp';

export const HTTP_DEFAULTS = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  idleTimeoutMs: 5_000,
  maxConnections: 128,
  maxStreams: 16,
  requestsPerMinute: 6_000,
  sseBuffer: 256,
  keepaliveMs: 15_000,
  maxBodyBytes: 4 * 1024 * 1024,
};

/** `http://127.0.0.1:8080/ckp`, `https://[::1]:8443`, `http://localhost:0` (0: any free port). */
export function parseHttpUrl(uri: string): HttpEndpoint {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    throw new ClawError('usage', `"${uri}" is not a valid http(s) URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new ClawError('usage', `"${uri}" is not an http:// or https:// URL`);
  // Credentials in a URL end up in shell history and process listings: tokens come from secret_refs only.
  if (u.username || u.password) throw new ClawError('usage', 'an http(s) URL must not carry credentials: use auth.bearer_token_refs / ?token_ref=');
  const tls = u.protocol === 'https:';
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const port = u.port === '' ? (tls ? 443 : 80) : Number(u.port);
  const query: Record<string, string> = {};
  for (const [k, val] of u.searchParams) query[k] = val;
  const path = u.pathname === '' || u.pathname === '/' ? DEFAULT_PATH : u.pathname.replace(/\/+$/, '');
  return { tls, host, port, path, query };
}

/** 127.0.0.0/8, ::1, ::ffff:127.x and `localhost`: reachable from this machine only. */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const a = address.toLowerCase();
  if (a === 'localhost' || a === '::1') return true;
  const v4 = a.startsWith('::ffff:') ? a.slice(7) : a;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

export interface HttpSettings {
  endpoint: HttpEndpoint;
  /** Address given to listen(): `localhost` binds 127.0.0.1 (never whatever the resolver picks). */
  bindHost: string;
  tokenRefs: string[];
  allowPlaintext: boolean;
  certFile?: string;
  keyFile?: string;
  clientCaFile?: string;
  maxBodyBytes: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  idleTimeoutMs: number;
  maxConnections: number;
  maxStreams: number;
  requestsPerMinute: number;
  sseBuffer: number;
  keepaliveMs: number;
}

/**
 * Defaults, then the config block; then the safety rules that refuse to start (ClawError 'usage', exit 2):
 * a non-loopback bind without authentication, bearer tokens over plain http off loopback, https without cert.
 */
export function resolveHttpSettings(endpoint: HttpEndpoint, cfg: HttpOptionsInput = {}, maxFrameBytes?: number): HttpSettings {
  for (const k of Object.keys(endpoint.query)) throw new ClawError('usage', `unknown http listen URL parameter "${k}" (options go in claw.runtime.yaml transports[].http)`);
  const l = cfg.limits ?? {};
  const s: HttpSettings = {
    endpoint,
    bindHost: endpoint.host === 'localhost' ? '127.0.0.1' : endpoint.host,
    tokenRefs: cfg.auth?.bearer_token_refs ?? [],
    allowPlaintext: cfg.auth?.allow_plaintext ?? false,
    certFile: cfg.tls?.cert_file,
    keyFile: cfg.tls?.key_file,
    clientCaFile: cfg.tls?.client_ca_file,
    maxBodyBytes: l.max_body_bytes ?? maxFrameBytes ?? HTTP_DEFAULTS.maxBodyBytes,
    headersTimeoutMs: l.headers_timeout_ms ?? HTTP_DEFAULTS.headersTimeoutMs,
    requestTimeoutMs: l.request_timeout_ms ?? HTTP_DEFAULTS.requestTimeoutMs,
    idleTimeoutMs: l.idle_timeout_ms ?? HTTP_DEFAULTS.idleTimeoutMs,
    maxConnections: l.max_connections ?? HTTP_DEFAULTS.maxConnections,
    maxStreams: l.max_streams ?? HTTP_DEFAULTS.maxStreams,
    requestsPerMinute: l.requests_per_minute ?? HTTP_DEFAULTS.requestsPerMinute,
    sseBuffer: cfg.sse?.buffer ?? HTTP_DEFAULTS.sseBuffer,
    keepaliveMs: cfg.sse?.keepalive_ms ?? HTTP_DEFAULTS.keepaliveMs,
  };
  const where = `${endpoint.tls ? 'https' : 'http'}://${endpoint.host}:${endpoint.port}`;
  if (endpoint.tls && (!s.certFile || !s.keyFile)) throw new ClawError('usage', `${where}: https needs tls.cert_file and tls.key_file in claw.runtime.yaml transports[].http`);
  if (!endpoint.tls && cfg.tls) throw new ClawError('usage', `${where}: tls options need an https:// URL`);
  if (s.headersTimeoutMs > s.requestTimeoutMs) s.headersTimeoutMs = s.requestTimeoutMs;
  if (!isLoopback(s.bindHost)) {
    const authenticated = s.tokenRefs.length > 0 || s.clientCaFile !== undefined;
    if (!authenticated) {
      throw new ClawError('usage', `${where}: refusing to listen on a non-loopback address without authentication (set auth.bearer_token_refs or tls.client_ca_file)`);
    }
    if (!endpoint.tls && !s.allowPlaintext) {
      throw new ClawError('usage', `${where}: bearer tokens over plain http off loopback travel in clear text; use https:// or set auth.allow_plaintext: true`);
    }
  }
  return s;
}
