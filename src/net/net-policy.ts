// The decisions behind guardedFetch (spec §5.8 capabilities.network, §10.2 SSRF), kept pure so
// they are tested without sockets. guarded-fetch.ts is the node:http(s) adapter around them.
import { ClawError } from '../protocol/errors.ts';
import { hostAllowed, normalizeHost } from './host-allowlist.ts';
import { type BlockReason, blockedHostname, canonicalIp, ssrfBlocked } from './ip-ranges.ts';

export type NetworkMode = 'deny' | 'allowlist' | 'allow-all';

/** `Sandbox.spec.capabilities.network`, structurally the same as the manifest schema's output. */
export interface NetworkCaps {
  mode?: NetworkMode;
  allowed_hosts?: string[];
  ssrf_protection?: { enabled?: boolean; block_private_ips?: boolean; dns_pinning?: boolean };
}

export type DenyReason = 'mode-deny' | 'host-not-allowed' | 'ssrf-blocked' | 'scheme' | 'too-many-redirects';

export interface DenyDetail {
  url: string;
  host?: string;
  /** ssrf-blocked: the refused address (or the host when it was refused by name). */
  address?: string;
  /** ssrf-blocked: which range, e.g. 'loopback', 'metadata', 'private'. */
  range?: BlockReason | string;
}

/** The sandbox refused the request. The tool layer maps it to -32010 (Sandbox denied). */
export class NetworkDenied extends ClawError {
  readonly reason: DenyReason;
  readonly detail: DenyDetail;
  constructor(reason: DenyReason, message: string, detail: DenyDetail) {
    super('network-denied', message);
    this.name = 'NetworkDenied';
    this.reason = reason;
    this.detail = detail;
  }
}

export type FetchFailure = 'invalid-url' | 'dns' | 'network' | 'timeout' | 'aborted';

/** The request was allowed but did not complete. */
export class FetchFailed extends ClawError {
  readonly kind: FetchFailure;
  constructor(kind: FetchFailure, message: string, options?: { cause?: unknown }) {
    super('fetch-failed', message, options);
    this.name = 'FetchFailed';
    this.kind = kind;
  }
}

export interface NetPolicy {
  mode: NetworkMode;
  allowedHosts: readonly string[];
  /** ssrf_protection.enabled, default true. */
  ssrf: boolean;
  /** ssrf_protection.block_private_ips, default true. */
  blockPrivate: boolean;
}

/**
 * Defaults, all failing closed: no `network` block or no `mode` means `deny`, except that a
 * non-empty `allowed_hosts` without a mode means `allowlist` (only those hosts). SSRF protection is
 * on unless `enabled: false`; `block_private_ips` is on unless false. `dns_pinning` is not read: with
 * protection on we always resolve once, check every address and connect to a checked one, because
 * checking without pinning is exactly the DNS rebinding hole; `dns_pinning: false` cannot turn that off.
 */
export function netPolicy(network: NetworkCaps | undefined): NetPolicy {
  const allowedHosts = network?.allowed_hosts ?? [];
  const mode = network?.mode ?? (allowedHosts.length > 0 ? 'allowlist' : 'deny');
  const s = network?.ssrf_protection;
  return { mode, allowedHosts, ssrf: s?.enabled !== false, blockPrivate: s?.block_private_ips !== false };
}

export interface Target {
  url: URL;
  /** Lower case, no brackets, no trailing dot. */
  host: string;
  /** Canonical address when the host is an IP literal (no DNS then), else null. */
  ip: string | null;
  port: number;
  secure: boolean;
}

/** Scheme, mode, allowlist and (SSRF on) refused names: everything decidable before DNS. */
export function checkTarget(raw: string | URL, p: NetPolicy): Target {
  let url: URL;
  try {
    url = new URL(String(raw));
  } catch (cause) {
    throw new FetchFailed('invalid-url', `invalid URL: ${String(raw).slice(0, 200)}`, { cause });
  }
  const href = url.href;
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new NetworkDenied('scheme', `scheme ${url.protocol} is not allowed (http and https only)`, { url: href });
  }
  const host = normalizeHost(url.hostname);
  if (host === '') throw new FetchFailed('invalid-url', `invalid URL host: ${href}`);
  if (p.mode === 'deny') throw new NetworkDenied('mode-deny', 'network access is denied by the sandbox', { url: href, host });
  if (p.mode === 'allowlist' && !hostAllowed(host, p.allowedHosts)) {
    throw new NetworkDenied('host-not-allowed', `host ${host} is not in the sandbox allowlist`, { url: href, host });
  }
  const ip = canonicalIp(host);
  if (p.ssrf && ip === null) {
    const range = blockedHostname(host);
    if (range) throw ssrfDenied(href, host, host, range);
  }
  const secure = url.protocol === 'https:';
  return { url, host, ip, port: url.port ? Number(url.port) : secure ? 443 : 80, secure };
}

const ssrfDenied = (url: string, host: string, address: string, range: string) =>
  new NetworkDenied('ssrf-blocked', `${host} resolves to a blocked address ${address} (${range})`, { url, host, address, range });

export type AddressCheck = (address: string) => string | null;
export const defaultAddressCheck = (p: NetPolicy): AddressCheck => (a) => ssrfBlocked(a, p.blockPrivate);

/**
 * Every resolved address must pass, not just the one we will use: a name answering with
 * [public, 127.0.0.1] is hostile (the resolver, a retry or a happy-eyeballs fallback may pick the
 * private one, and rebinding attacks rotate such answers), so one bad record refuses the host.
 */
export function checkAddresses(t: Target, addresses: readonly string[], check: AddressCheck): void {
  for (const a of addresses) {
    const range = check(a);
    if (range !== null) throw ssrfDenied(t.url.href, t.host, a, range);
  }
}

export type Headers = Record<string, string>;

/**
 * Caller headers, lower-cased. `host` is dropped (the Host header is always the URL's host, so a
 * caller cannot reach another virtual host behind an allowed address), framing headers are ours,
 * and `accept-encoding` defaults to identity because bodies are not decompressed.
 */
export function requestHeaders(headers: Record<string, string> | undefined, body: string | Uint8Array | undefined): Headers {
  const out: Headers = {};
  for (const [k, v] of Object.entries(headers ?? {})) {
    const key = k.toLowerCase();
    if (key === 'host' || key === 'content-length' || key === 'transfer-encoding' || key === 'connection') continue;
    out[key] = String(v);
  }
  out['accept-encoding'] ??= 'identity';
  if (body !== undefined) out['content-length'] = String(typeof body === 'string' ? byteLength(body) : body.byteLength);
  return out;
}

const byteLength = (s: string): number => new TextEncoder().encode(s).byteLength;

export interface HopRequest {
  method: string;
  headers: Headers;
  body: string | Uint8Array | undefined;
}

export const isRedirect = (status: number): boolean => status === 301 || status === 302 || status === 303 || status === 307 || status === 308;

const BODY_HEADERS = ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location'];
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];

/**
 * The request for the next hop (Fetch standard semantics): 303, and 301/302 after a POST, become a
 * GET without body; 307/308 keep method and body. Credentials never follow to another origin.
 * Returns the absolute next URL; the caller re-runs checkTarget and the SSRF check on it.
 */
export function redirectRequest(status: number, location: string, from: URL, req: HopRequest): { url: string; req: HopRequest } {
  let next: URL;
  try {
    next = new URL(location, from);
  } catch (cause) {
    throw new FetchFailed('invalid-url', `invalid redirect Location: ${location.slice(0, 200)}`, { cause });
  }
  let { method, body } = req;
  const headers = { ...req.headers };
  if ((status === 303 && method !== 'HEAD') || ((status === 301 || status === 302) && method === 'POST')) {
    method = 'GET';
    body = undefined;
    for (const h of BODY_HEADERS) delete headers[h];
  }
  if (next.origin !== from.origin) for (const h of CREDENTIAL_HEADERS) delete headers[h];
  return { url: next.href, req: { method, headers, body } };
}

/** Host part for node:http (`hostname`, without brackets) and TLS SNI (names only, never IPs). */
export function connectOptions(t: Target): { hostname: string; port: number; path: string; servername?: string; auth?: string } {
  const o: { hostname: string; port: number; path: string; servername?: string; auth?: string } = {
    hostname: t.ip ?? t.host,
    port: t.port,
    path: `${t.url.pathname}${t.url.search}`,
  };
  if (t.secure && t.ip === null) o.servername = t.host;
  if (t.url.username || t.url.password) o.auth = `${decodeURIComponent(t.url.username)}:${decodeURIComponent(t.url.password)}`;
  return o;
}

/** The first `max` bytes, minus a UTF-8 character the cut would leave incomplete at the end. */
export function utf8Prefix(buf: Uint8Array, max: number): Uint8Array {
  let end = Math.min(max, buf.byteLength);
  let i = end;
  while (i > 0 && end - i < 3 && (buf[i - 1] & 0xc0) === 0x80) i--; // continuation bytes 10xxxxxx
  const lead = i > 0 ? buf[i - 1] : 0;
  if (lead >= 0xc0 && end - (i - 1) < (lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2)) end = i - 1;
  return buf.subarray(0, end);
}
