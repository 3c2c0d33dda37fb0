// A small HTTP(S) server on node:http / node:https (Node and Bun), no framework: exact-path routes behind the
// same gates. Every route gets the connection cap, the slow-client timeouts and the per-client rate limit;
// `auth` says whether it needs credentials. The CKP endpoint and /healthz are routes (ckp-route.ts,
// health-route.ts); a later module adds its own (A2A's agent card) with addRoute, on the same listener.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../../kernel/ports.ts';
import { ErrorCode } from '../../protocol/errors.ts';
import type { Authenticator } from './auth.ts';
import { fromLoopback } from './auth.ts';
import { createRateLimiter, rateKey, type RateLimiter } from './limits.ts';
import { drainRest } from './body.ts';
import { isLoopback, type HttpSettings } from './settings.ts';
import { refuse } from './reply.ts';
import { timerDelay } from '../../protocol/delay.ts';

export interface RouteContext {
  /** The client's address: the rate limit's key. */
  client: string;
  /** The peer is on this machine. */
  loopback: boolean;
  /** Who authenticated (auth.ts check): a bearer token's secret_ref name or `cn:<CN>`; unset without credentials. */
  principal?: string;
  /** Credentials were checked and passed (a listener with none configured: unset, loopback only). */
  authenticated?: boolean;
}

export interface Route {
  /**
   * `required`: the configured credentials (none configured: loopback listener, open); `loopback-open`: open to
   * peers on this machine, credentials from elsewhere (/healthz); `public`: never (an A2A agent card).
   */
  auth: 'required' | 'loopback-open' | 'public';
  /**
   * A2A callers' tokens (`auth.a2a_token_refs`) are accepted here (the A2A routes). Default: operators only, so
   * a partner agent's token never opens the CKP endpoint and its `claw.*` methods (CKP-A2A profile §8).
   */
  admitsCallers?: boolean;
  handle(req: IncomingMessage, res: ServerResponse, ctx: RouteContext): void;
}

export interface HttpServer {
  /** `path` exactly; a path ending in `/` also every path below it (an exact route wins). */
  addRoute(path: string, route: Route): void;
  /** Bound address once listening (port 0 becomes the port the OS chose). */
  address(): { host: string; port: number };
  listen(): Promise<void>;
  /** Stop accepting, close idle connections; busy ones get `graceMs` to finish, then are cut. */
  close(graceMs: number): Promise<void>;
}

export interface ServerDeps {
  settings: HttpSettings;
  auth: Authenticator;
  limiter: RateLimiter;
  /** The host's monotonic clock (ms): the refusal log's window must not reset or stall when the wall clock steps. */
  monotonic?: () => number;
  log: Logger;
  /** TLS material (https): PEM text; never logged. */
  tls?: { cert: string; key: string; ca?: string };
  http: typeof import('node:http');
  https?: typeof import('node:https');
  /** A2A routes will be added (after the bind): callers are told apart from the first request on. */
  servesA2a?: boolean;
}

export function createHttpServer(d: ServerDeps): HttpServer {
  const s = d.settings;
  const routes = new Map<string, Route>();
  /** A route admits A2A callers: client certificates not listed in operator_cns are callers here (auth.ts). */
  let callersServed = d.servesA2a === true;
  const refusalLog = createRateLimiter(1, d.monotonic ?? (() => performance.now()), 1_000);
  const sockets = new Set<Socket>();
  /** Connections answered 503 over the cap: Node still parses a request sent on one, and it must not run. */
  const refused = new WeakSet<Socket>();
  /**
   * Connections by peer address and port. Under TLS a request's socket is the TLS socket, not the TCP one the
   * 'connection' event counted; the TCP 4-tuple is public on both and names one live connection on this listener.
   */
  const byPeer = new Map<string, Socket>();
  /** Each counted connection's key, as read at 'connection' (Bun no longer reports the address once closed). */
  const keys = new WeakMap<Socket, string>();
  /** Requests in progress per counted connection; one with none may give way at the cap. */
  const busy = new WeakMap<Socket, number>();
  /** A runtime whose request sockets do not lead back to a counted connection evicts nothing (it could cut a busy one). */
  let evicts = true;
  /**
   * Requests in progress per A2A caller. A request in progress keeps its connection at the cap, so without this one
   * partner (untrusted input, CKP-A2A profile §8) dripping bodies at the rate floor, or never reading its answers,
   * holds every connection of the listener: a quarter of them at most.
   */
  const callerBusy = new Map<string, number>();
  const perCaller = Math.max(1, Math.floor(s.maxConnections / 4));
  const options = {
    headersTimeout: s.headersTimeoutMs,
    requestTimeout: s.requestTimeoutMs,
    keepAliveTimeout: s.idleTimeoutMs,
    // Node checks the two timeouts above every connectionsCheckingInterval (30 s by default): too coarse to
    // stop a slow-header client within headers_timeout_ms.
    connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(s.headersTimeoutMs / 2))),
    maxHeaderSize: 16 * 1024,
  };
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    // Its client was told 503 and retry-after: run here too, the request would run twice.
    if (refused.has(req.socket)) return void req.socket.destroy();
    const conn = sockets.has(req.socket) ? req.socket : byPeer.get(peerKey(req.socket));
    if (conn) {
      busy.set(conn, (busy.get(conn) ?? 0) + 1);
      res.on('close', () => busy.set(conn, (busy.get(conn) ?? 1) - 1));
      // Under TLS the idle cut-off moves to the socket the request is on, where a route can pause it (reply.ts workingOn).
      if (conn !== req.socket && conn.timeout) {
        conn.setTimeout(0);
        req.socket.setTimeout(s.requestTimeoutMs, () => req.socket.destroy());
      }
    } else if (!req.socket.destroyed) evicts = false;
    // Answered before the body was read (a 401, 404, 429, 415…): Node would read and drop the rest for as long as
    // request_timeout_ms, whatever Content-Length says; an unauthenticated peer must not keep the listener reading.
    res.on('finish', () => {
      if (!req.complete) drainRest(req, s.maxBodyBytes);
    });
    try {
      dispatch(req, res);
    } catch (e) {
      d.log.error('http route failed', { error: e instanceof Error ? e.message : String(e) });
      refuse(res, 500, ErrorCode.InternalError, 'Internal error');
    }
  };
  const server: Server = d.tls
    ? d.https!.createServer({ ...options, cert: d.tls.cert, key: d.tls.key, ca: d.tls.ca, requestCert: d.tls.ca !== undefined, rejectUnauthorized: false }, onRequest)
    : d.http.createServer(options, onRequest);
  server.headersTimeout = s.headersTimeoutMs;
  server.requestTimeout = s.requestTimeoutMs;
  server.keepAliveTimeout = s.idleTimeoutMs;
  server.maxHeadersCount = 100;

  server.on('connection', (socket: Socket) => {
    // Bun does not always emit 'close' for a socket its HTTP server closed itself (a timeout): count only live ones.
    if (sockets.size >= s.maxConnections) for (const x of sockets) if (x.destroyed) forget(x);
    // The oldest connection with no request in progress (headers still trickling in, a TLS handshake, an idle
    // keep-alive) gives way: else one peer reopening slow connections as headers_timeout_ms cuts them holds
    // every slot for good. A request in progress is never cut for a newcomer.
    if (sockets.size >= s.maxConnections && evicts) {
      for (const x of sockets)
        if (!busy.get(x)) {
          forget(x);
          x.destroy();
          break;
        }
    }
    if (sockets.size >= s.maxConnections) {
      refused.add(socket);
      // Over the cap: a plain-http client gets a 503 it can read; a TLS one is closed before its handshake.
      if (!d.tls) {
        const body = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: ErrorCode.InvalidRequest, message: 'too many connections' } });
        socket.end(`HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\nretry-after: 1\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
      } else socket.destroy();
      socket.on('error', () => {});
      return;
    }
    sockets.add(socket);
    const key = peerKey(socket);
    keys.set(socket, key);
    byPeer.set(key, socket);
    // Idle sockets (no request yet, or between keep-alive requests) are covered by keepAliveTimeout and
    // headersTimeout; this catches a socket silent for longer than a whole request may take.
    socket.setTimeout(s.requestTimeoutMs, () => socket.destroy());
    socket.on('close', () => forget(socket));
    socket.on('error', () => {});
  });
  function forget(x: Socket): void {
    sockets.delete(x);
    const key = keys.get(x);
    if (key !== undefined && byPeer.get(key) === x) byPeer.delete(key);
  }
  // A malformed request or a timeout: Node answers 400/408/431 itself; nothing of it reaches a route.
  server.on('tlsClientError', () => {});

  function dispatch(req: IncomingMessage, res: ServerResponse): void {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const route = routes.get(path) ?? subtreeRoute(path);
    if (!route) {
      refuse(res, 404, ErrorCode.InvalidRequest, 'no such endpoint');
      return;
    }
    const ctx: RouteContext = { client: req.socket.remoteAddress ?? 'unknown', loopback: fromLoopback(req) };
    const foreign = foreignRequest(req, s);
    if (foreign) {
      refuse(res, 403, ErrorCode.ChannelAuthFailed, foreign);
      return;
    }
    const retryAfter = d.limiter.take(rateKey(ctx.client));
    if (retryAfter > 0) {
      refuse(res, 429, ErrorCode.ChannelRateLimited, 'rate limited: too many requests from this client', {
        data: { retry_after_s: retryAfter },
        headers: { 'retry-after': String(retryAfter) },
      });
      return;
    }
    const needsAuth = route.auth === 'required' || (route.auth === 'loopback-open' && !ctx.loopback);
    if (needsAuth && d.auth.configured) {
      const { outcome, principal, caller } = d.auth.check(req, callersServed);
      if (outcome === 'ok' && caller && !route.admitsCallers) {
        refuse(res, 403, ErrorCode.ChannelAuthFailed, 'this credential is an A2A caller\'s: not accepted on this endpoint');
        return;
      }
      // One entry per caller credential ever seen: they are configured (token refs, the operator's CA).
      if (outcome === 'ok' && caller && principal !== undefined) {
        const n = callerBusy.get(principal) ?? 0;
        if (n >= perCaller) return refuse(res, 429, ErrorCode.ChannelRateLimited, 'too many requests in progress for this caller', { headers: { 'retry-after': '1' } });
        callerBusy.set(principal, n + 1);
        res.on('close', () => callerBusy.set(principal, callerBusy.get(principal)! - 1));
      }
      if (outcome === 'ok') Object.assign(ctx, { principal, authenticated: true });
      else {
        // Never say which token or what was sent; the log gets the address only, once a minute per address
        // (a client hammering the port must not flood the log).
        if (refusalLog.take(rateKey(ctx.client)) === 0) d.log.warn('http request refused: authentication', { client: ctx.client, reason: outcome });
        refuse(res, 401, ErrorCode.ChannelAuthFailed, outcome === 'missing' ? 'authentication required' : 'authentication failed', {
          headers: { 'www-authenticate': 'Bearer realm="claw"' },
        });
        return;
      }
    }
    route.handle(req, res, ctx);
  }

  /** A route added at a path ending in `/` serves every path below it (the A2A HTTP+JSON binding's /tasks/{id}). */
  function subtreeRoute(path: string): Route | undefined {
    for (const [p, r] of routes) if (p.endsWith('/') && path.startsWith(p)) return r;
    return undefined;
  }

  let bound = { host: s.bindHost, port: s.endpoint.port };
  return {
    addRoute(path, route) {
      routes.set(path, route);
      if (route.admitsCallers) callersServed = true;
    },
    address: () => bound,
    listen: () =>
      new Promise<void>((resolve, reject) => {
        const fail = (e: Error) => reject(e);
        server.once('error', fail);
        server.listen(s.endpoint.port, s.bindHost, () => {
          server.off('error', fail);
          server.on('error', (e) => d.log.error('http server error', { error: e.message }));
          const a = server.address();
          if (a && typeof a === 'object') bound = { host: s.bindHost, port: a.port };
          resolve();
        });
      }),
    // Resolves at once (the transport's `closed`): busy connections finish their replies in the background.
    async close(graceMs) {
      server.close();
      (server as { closeIdleConnections?: () => void }).closeIdleConnections?.();
      const cut = setTimeout(() => {
        for (const sock of sockets) sock.destroy();
      }, timerDelay(graceMs));
      cut.unref?.();
    },
  };
}

/** The connection's TCP 4-tuple: the same on a TLS socket and on the TCP socket under it. */
function peerKey(x: Socket): string {
  return `${x.remoteAddress}|${x.remotePort}|${x.localAddress}|${x.localPort}`;
}

/**
 * A request a browser made for another site (MCP's Streamable HTTP asks servers to check this): an `Origin` that
 * is neither on this machine nor in `allowed_origins`, or, on a loopback listener, a `Host` naming something other
 * than this machine (DNS rebinding: a page whose name now resolves to 127.0.0.1). Returns the refusal's message.
 */
function foreignRequest(req: IncomingMessage, s: HttpSettings): string | undefined {
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== 'null') {
    let host: string | undefined;
    try {
      host = new URL(origin).hostname.replace(/^\[|\]$/g, '');
    } catch {
      return 'cross-origin request refused';
    }
    if (!isLoopback(host) && !s.allowedOrigins.includes(origin.toLowerCase())) return 'cross-origin request refused';
  } else if (origin === 'null') return 'cross-origin request refused';
  if (isLoopback(s.bindHost)) {
    const h = req.headers.host;
    const name = h === undefined ? undefined : h.startsWith('[') ? h.slice(1, h.indexOf(']')) : h.replace(/:\d+$/, '');
    if (name !== undefined && !isLoopback(name)) return 'Host is not this machine: refused (DNS rebinding)';
  }
  return undefined;
}
