// HTTP(S) for tools under a Sandbox's `capabilities.network` (spec §5.8, §10.2): mode and
// allowlist, SSRF protection with DNS pinning, manual redirects re-checked at every hop, a body
// cap, a deadline and an abort signal. The decisions live in net-policy.ts / ip-ranges.ts /
// host-allowlist.ts (pure); this file only drives node:http(s) and node:dns.
//
// Pinning: the host is resolved once per hop by us (every A/AAAA record, all checked), and the
// connection is made by node:http(s) with a `lookup` that can only answer the checked address, so
// nothing resolves the name a second time (DNS rebinding). The request still names the original
// host: the Host header and, for https, TLS SNI and certificate verification use the hostname, not
// the IP. As a last guard the socket's peer address is compared with the pinned one on connect.
// Resolution and pinning happen the same way with SSRF protection off; only the check is skipped.
//
// Documented choices:
//   - No proxy (HTTP(S)_PROXY are ignored), no cookies, no decompression (Accept-Encoding defaults
//     to identity), body returned as UTF-8 text.
//   - The deadline (`timeoutMs`) covers the whole exchange: DNS, every hop and the body.
//   - Checked addresses are tried in resolver order; the next one only after a connect-level error
//     (refused/unreachable), so an IPv6-less board still reaches dual-stack hosts.
//   - `maxRedirects` redirects are followed; one more is `too-many-redirects` (0: none followed).
import type * as http from 'node:http';
import { dnsModule, httpModule, httpsModule } from '../node/lazy.ts';
import type { LookupFunction, Socket } from 'node:net';
import { canonicalIp } from './ip-ranges.ts';
import { normalizeHost } from './host-allowlist.ts';
import {
  type AddressCheck,
  FetchFailed,
  type HopRequest,
  type NetworkCaps,
  NetworkDenied,
  type Target,
  checkAddresses,
  checkTarget,
  connectOptions,
  defaultAddressCheck,
  isRedirect,
  netPolicy,
  redirectRequest,
  requestHeaders,
  utf8Prefix,
} from './net-policy.ts';
import { deadline, type Deadline } from '../protocol/deadline.ts';

export { FetchFailed, NetworkDenied, type NetworkCaps } from './net-policy.ts';

export const DEFAULT_MAX_BYTES = 1024 * 1024;
export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_REDIRECTS = 5;

export interface ResolvedAddress {
  address: string;
  family: number;
}
/** All A/AAAA records for a name (like dns.lookup with `all: true`). */
export type Lookup = (host: string) => Promise<ResolvedAddress[]>;

export interface GuardedFetchInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Response body cap in bytes (default 1 MiB); beyond it the body is cut and `truncated` set. */
  maxBytes?: number;
  /** Deadline for the whole fetch, redirects included (default 30 s). */
  timeoutMs?: number;
  /** Redirects followed at most (default 5). */
  maxRedirects?: number;
  signal?: AbortSignal;
}

export interface GuardedFetchDeps {
  /** Resolver (default: node:dns lookup, all records, resolver order). Called once per hop. */
  lookup?: Lookup;
  /**
   * Replaces the SSRF address verdict (default: ip-ranges `ssrfBlocked` under block_private_ips).
   * For tests, which have only loopback to connect to; production callers never pass it.
   */
  checkAddress?: AddressCheck;
}

export interface GuardedFetchResult {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: string;
  truncated: boolean;
  finalUrl: string;
  /** The peer address of the final hop: the address that was checked and pinned. */
  address: string;
}

const systemLookup: Lookup = async (host) => (await dnsModule()).promises.lookup(host, { all: true, verbatim: true });

const CONNECT_ERRORS = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'EAFNOSUPPORT']);

export async function guardedFetch(
  url: string,
  init: GuardedFetchInit,
  network: NetworkCaps | undefined,
  deps: GuardedFetchDeps = {},
): Promise<GuardedFetchResult> {
  const maxBytes = Math.max(0, init.maxBytes ?? DEFAULT_MAX_BYTES);
  const x = exchange(init.signal, init.timeoutMs, 'fetch');
  try {
    // The deadline covers the body too: it is read here, under the cap.
    const { res, address, target } = await finalHop(url, init, network, deps, x.signal);
    const { bytes, truncated } = await readBody(res, maxBytes);
    return {
      status: res.statusCode ?? 0,
      headers: flatHeaders(res.headers),
      body: Buffer.from(bytes).toString('utf8'),
      truncated,
      finalUrl: target.url.href,
      address,
    };
  } catch (e) {
    throw failure(e, x.why(), { timeout: 'fetch timed out', aborted: 'fetch aborted', failed: 'fetch failed' });
  } finally {
    x.clearDeadline();
    x.unlink();
  }
}

/** A caller's signal already aborted is refused before anything is resolved or sent. */
function exchange(callerSignal: AbortSignal | undefined, timeoutMs: number | undefined, noun: string): Deadline {
  if (callerSignal?.aborted) throw new FetchFailed('aborted', `${noun} aborted`);
  return deadline(callerSignal, timeoutMs ?? DEFAULT_TIMEOUT_MS);
}

/**
 * Mode, allowlist and SSRF checks with the resolved addresses pinned, per hop, redirects followed (and re-checked)
 * up to `maxRedirects`: the final hop's response, its body not read yet.
 */
async function finalHop(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string | Uint8Array; maxRedirects?: number; dropOnCrossOrigin?: string[] },
  network: NetworkCaps | undefined,
  deps: GuardedFetchDeps,
  signal: AbortSignal,
): Promise<{ res: http.IncomingMessage; address: string; target: Target }> {
  const policy = netPolicy(network);
  const lookup = deps.lookup ?? systemLookup;
  const check = deps.checkAddress ?? defaultAddressCheck(policy);
  const maxRedirects = init.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  let target = checkTarget(url, policy);
  let req: HopRequest = { method: (init.method ?? 'GET').toUpperCase(), headers: requestHeaders(init.headers, init.body), body: init.body };
  for (let hop = 0; ; hop++) {
    const addresses = target.ip !== null ? [target.ip] : await resolve(lookup, target.host, signal);
    if (policy.ssrf) checkAddresses(target, addresses, check);
    const { res, address } = await connectAny(target, addresses, req, signal);
    const location = res.headers.location;
    if (!isRedirect(res.statusCode ?? 0) || !location) return { res, address, target };
    res.destroy();
    if (hop >= maxRedirects) {
      throw new NetworkDenied('too-many-redirects', `more than ${maxRedirects} redirects`, { url: target.url.href, host: target.host });
    }
    const next = redirectRequest(res.statusCode ?? 0, location, target.url, req);
    if (init.dropOnCrossOrigin && new URL(next.url).origin !== target.url.origin) for (const h of init.dropOnCrossOrigin) delete next.req.headers[h.toLowerCase()];
    target = checkTarget(next.url, policy);
    req = next.req;
  }
}

/** What an exchange throws: a policy refusal as it is, else a FetchFailed that says timeout, abort or network. */
function failure(e: unknown, why: 'timeout' | 'aborted' | undefined, words: { timeout: string; aborted: string; failed: string }): Error {
  if (e instanceof NetworkDenied) return e;
  if (why) return new FetchFailed(why, words[why], { cause: e });
  if (e instanceof FetchFailed) return e;
  return new FetchFailed('network', `${words.failed}: ${(e as Error)?.message ?? String(e)}`, { cause: e });
}

async function resolve(lookup: Lookup, host: string, signal: AbortSignal): Promise<string[]> {
  let records: ResolvedAddress[];
  try {
    records = await abortable(lookup(host), signal);
  } catch (cause) {
    if (signal.aborted) throw cause;
    throw new FetchFailed('dns', `cannot resolve ${host}`, { cause });
  }
  if (!records || records.length === 0) throw new FetchFailed('dns', `${host} has no addresses`);
  return records.map((r) => r.address);
}

function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new Error('aborted'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

async function connectAny(t: Target, addresses: string[], req: HopRequest, signal: AbortSignal) {
  for (let i = 0; ; i++) {
    try {
      return await send(t, addresses[i], req, signal);
    } catch (e) {
      const code = (e as { code?: string })?.code;
      if (i + 1 >= addresses.length || signal.aborted || !code || !CONNECT_ERRORS.has(code)) throw e;
    }
  }
}

const sameIp = (a: string | undefined, b: string): boolean => a !== undefined && canonicalIp(a) === canonicalIp(b);

async function send(t: Target, address: string, r: HopRequest, signal: AbortSignal): Promise<{ res: http.IncomingMessage; address: string }> {
  const mod = t.secure ? await httpsModule() : await httpModule();
  return new Promise((resolve, reject) => {
    const family = address.includes(':') ? 6 : 4;
    // The only answer this connection can get: the checked address. Handles both the classic
    // (err, address, family) form and the `all: true` form Node uses for autoSelectFamily.
    const lookup = ((name: string, opts: unknown, cb?: (...a: unknown[]) => void) => {
      const done = (typeof opts === 'function' ? opts : cb) as (...a: unknown[]) => void;
      const all = typeof opts === 'object' && opts !== null && (opts as { all?: boolean }).all === true;
      process.nextTick(() => {
        if (normalizeHost(name) !== t.host) done(Object.assign(new Error(`unpinned lookup for ${name}`), { code: 'ENOTFOUND' }));
        else if (all) done(null, [{ address, family }]);
        else done(null, address, family);
      });
    }) as unknown as LookupFunction;

    let peer: string | undefined;
    const verify = (s: Socket): boolean => {
      peer = s.remoteAddress;
      if (sameIp(peer, address)) return true;
      req.destroy(new Error(`connected to ${peer ?? 'an unknown address'}, not the pinned ${address}`));
      return false;
    };
    const req = mod.request({
      ...connectOptions(t),
      method: r.method,
      headers: r.headers,
      lookup,
      agent: false,
      signal,
    });
    req.on('socket', (s: Socket) => {
      if (!s.connecting && s.remoteAddress) verify(s);
      else s.once('connect', () => verify(s));
    });
    req.on('response', (res) => {
      if (peer === undefined && res.socket && !verify(res.socket)) return;
      resolve({ res, address: canonicalIp(peer ?? address) ?? address });
    });
    req.on('error', reject);
    if (r.body !== undefined) req.end(r.body);
    else req.end();
  });
}

function readBody(res: http.IncomingMessage, maxBytes: number): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (truncated: boolean) => {
      if (settled) return;
      settled = true;
      const all = Buffer.concat(chunks);
      resolve({ bytes: truncated ? utf8Prefix(all, maxBytes) : all, truncated });
    };
    const fail = (e: Error) => {
      if (settled) return;
      settled = true;
      reject(e);
    };
    res.on('data', (c: Buffer) => {
      if (settled) return;
      if (size + c.length > maxBytes) {
        chunks.push(c.subarray(0, maxBytes - size));
        size = maxBytes;
        finish(true);
        res.destroy();
        return;
      }
      chunks.push(c);
      size += c.length;
    });
    res.on('end', () => finish(false));
    res.on('error', fail);
    res.on('close', () => {
      if (!res.complete) fail(new Error('connection closed before the response body was complete'));
    });
  });
}

function flatHeaders(h: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

export interface GuardedRequestInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Deadline until the response headers of the final hop (default 30 s); the body is the caller's. */
  timeoutMs?: number;
  /** Redirects followed at most (default 5). */
  maxRedirects?: number;
  /** Aborts the exchange at any time, the body stream included. */
  signal?: AbortSignal;
  /**
   * Headers (lower-case) never sent to another origin after a redirect, besides Authorization and
   * Cookie (redirectRequest): the caller's own credentials, e.g. an API key header.
   */
  dropOnCrossOrigin?: string[];
}

export interface GuardedResponse {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** The body as it arrives (long-lived streams such as text/event-stream); destroy it when done. */
  body: http.IncomingMessage;
  finalUrl: string;
  address: string;
}

/**
 * guardedFetch's checks (mode, allowlist, SSRF with DNS pinning, redirects re-checked per hop) for a
 * caller that reads the body itself, as a stream: the MCP Streamable HTTP transport, whose responses
 * may be Server-Sent Event streams that stay open for the length of a tool call.
 */
export async function guardedRequest(
  url: string,
  init: GuardedRequestInit,
  network: NetworkCaps | undefined,
  deps: GuardedFetchDeps = {},
): Promise<GuardedResponse> {
  const x = exchange(init.signal, init.timeoutMs, 'request');
  try {
    const { res, address, target } = await finalHop(url, init, network, deps, x.signal);
    x.clearDeadline();
    // The caller's signal keeps governing the body; the link goes when the body is done.
    res.once('close', x.unlink);
    res.on('error', () => {}); // an aborted stream is reported to whoever reads it
    return { status: res.statusCode ?? 0, headers: flatHeaders(res.headers), body: res, finalUrl: target.url.href, address };
  } catch (e) {
    x.clearDeadline();
    x.unlink();
    throw failure(e, x.why(), { timeout: 'no response in time', aborted: 'request aborted', failed: 'request failed' });
  }
}
