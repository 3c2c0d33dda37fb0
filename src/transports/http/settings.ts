// Settings of the HTTP transport (docs/transports.md, HTTP): the `http://host:port/path` URI, then claw.runtime.yaml's
// `transports[].http` block (./options.ts), then the rules that refuse an unsafe listener. Secure defaults: loopback
// only, bounded everything (see "Limits" in the docs).
import { ClawError } from '../../protocol/errors.ts';
import type { HttpOptionsInput } from './options.ts';
import { timerDelay } from '../../protocol/delay.ts';

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
  /** A2A callers' token refs: A2A routes only. */
  callerTokenRefs: string[];
  /** Client-certificate CNs that stay operators on a listener serving A2A (auth.ts). */
  operatorCns: string[];
  allowPlaintext: boolean;
  allowedOrigins: string[];
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
  const unknown = Object.keys(endpoint.query)[0];
  if (unknown !== undefined) throw new ClawError('usage', `unknown http listen URL parameter "${unknown}" (options go in claw.runtime.yaml transports[].http)`);
  const l = cfg.limits ?? {};
  const s: HttpSettings = {
    endpoint,
    bindHost: endpoint.host === 'localhost' ? '127.0.0.1' : endpoint.host,
    tokenRefs: cfg.auth?.bearer_token_refs ?? [],
    callerTokenRefs: cfg.auth?.a2a_token_refs ?? [],
    operatorCns: cfg.auth?.operator_cns ?? [],
    allowPlaintext: cfg.auth?.allow_plaintext ?? false,
    allowedOrigins: (cfg.allowed_origins ?? []).map((o) => o.toLowerCase()),
    certFile: cfg.tls?.cert_file,
    keyFile: cfg.tls?.key_file,
    clientCaFile: cfg.tls?.client_ca_file,
    maxBodyBytes: l.max_body_bytes ?? maxFrameBytes ?? HTTP_DEFAULTS.maxBodyBytes,
    headersTimeoutMs: timerDelay(l.headers_timeout_ms ?? HTTP_DEFAULTS.headersTimeoutMs),
    requestTimeoutMs: timerDelay(l.request_timeout_ms ?? HTTP_DEFAULTS.requestTimeoutMs),
    idleTimeoutMs: timerDelay(l.idle_timeout_ms ?? HTTP_DEFAULTS.idleTimeoutMs),
    maxConnections: l.max_connections ?? HTTP_DEFAULTS.maxConnections,
    maxStreams: l.max_streams ?? HTTP_DEFAULTS.maxStreams,
    requestsPerMinute: l.requests_per_minute ?? HTTP_DEFAULTS.requestsPerMinute,
    sseBuffer: cfg.sse?.buffer ?? HTTP_DEFAULTS.sseBuffer,
    keepaliveMs: timerDelay(cfg.sse?.keepalive_ms ?? HTTP_DEFAULTS.keepaliveMs),
  };
  const where = `${endpoint.tls ? 'https' : 'http'}://${endpoint.host}:${endpoint.port}`;
  if (endpoint.tls && (!s.certFile || !s.keyFile)) throw new ClawError('usage', `${where}: https needs tls.cert_file and tls.key_file in claw.runtime.yaml transports[].http`);
  if (!endpoint.tls && cfg.tls) throw new ClawError('usage', `${where}: tls options need an https:// URL`);
  if (s.headersTimeoutMs > s.requestTimeoutMs) s.headersTimeoutMs = s.requestTimeoutMs;
  // A token's ref is its A2A caller id: `local` is the caller of a listener without credentials, and a `:` would
  // read as a certificate's `cn:<CN>` (auth.ts). Either would make two credentials one caller.
  for (const ref of [...s.tokenRefs, ...s.callerTokenRefs]) {
    if (ref === 'local' || ref.includes(':')) throw new ClawError('usage', `${where}: token ref "${ref}" is reserved (local, or a ":"): rename it`);
  }
  if (!isLoopback(s.bindHost)) {
    const authenticated = s.tokenRefs.length > 0 || s.callerTokenRefs.length > 0 || s.clientCaFile !== undefined;
    if (!authenticated) {
      throw new ClawError('usage', `${where}: refusing to listen on a non-loopback address without authentication (set auth.bearer_token_refs or tls.client_ca_file)`);
    }
    if (!endpoint.tls && !s.allowPlaintext) {
      throw new ClawError('usage', `${where}: bearer tokens over plain http off loopback travel in clear text; use https:// or set auth.allow_plaintext: true`);
    }
  }
  return s;
}
