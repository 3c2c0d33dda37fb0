// The HTTP transport (docs/transports.md, HTTP): one listener serving the CKP endpoint and /healthz, with a route
// seam for later modules. Agent notifications go into the SSE buffer and to every open stream.
import type { InboundFrame, Logger, Transport } from '../../kernel/ports.ts';
import type { JsonRpcMessage } from '../../protocol/jsonrpc.ts';
import type { HttpSettings } from './settings.ts';
import type { HttpServer, Route } from './server.ts';
import { ckpRoute } from './ckp-route.ts';
import { healthRoute } from './health-route.ts';
import { SessionIds } from './session.ts';
import { EventBuffer, type SseStream } from './sse.ts';

export interface HttpTransport extends Transport {
  /** Serve another path on the same listener (same connection limits, rate limit and credentials). */
  addRoute(path: string, route: Route): void;
  /** Where it listens: `http://127.0.0.1:41235/ckp`. */
  readonly url: string;
  /** What a caller must present (the kinds, never the values): an A2A agent card says it (docs/a2a.md). */
  readonly security: { bearer: boolean; clientCert: boolean };
  /** The body cap and request timeout a route that reads bodies applies too; the connection cap routes share. */
  readonly limits: { maxBodyBytes: number; requestTimeoutMs: number; maxConnections: number };
}

/** How long connections busy at close() may still finish (their replies are written) before they are cut. */
const CLOSE_GRACE_MS = 5_000;

export function createHttpTransport(opts: { server: HttpServer; settings: HttpSettings; log: Logger; epoch: string }): HttpTransport {
  const { server, settings: s } = opts;
  let deliverTo: ((frame: InboundFrame) => void) | undefined;
  let open = true;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((r) => (resolveClosed = r));
  const buffer = new EventBuffer(s.sseBuffer, opts.epoch);
  const streams = new Set<SseStream>();
  const deliver = () => (open ? deliverTo : undefined);
  server.addRoute(
    s.endpoint.path,
    ckpRoute({
      maxBodyBytes: s.maxBodyBytes,
      requestTimeoutMs: s.requestTimeoutMs,
      maxStreams: s.maxStreams,
      keepaliveMs: s.keepaliveMs,
      sessions: new SessionIds(),
      buffer,
      streams,
      deliver,
      log: opts.log,
    }),
  );
  server.addRoute('/healthz', healthRoute(deliver));
  const a = server.address();
  const host = a.host.includes(':') ? `[${a.host}]` : a.host;
  return {
    name: 'http',
    closed,
    url: `${s.endpoint.tls ? 'https' : 'http'}://${host}:${a.port}${s.endpoint.path}`,
    addRoute: (path, route) => server.addRoute(path, route),
    security: { bearer: s.tokenRefs.length > 0 || s.callerTokenRefs.length > 0, clientCert: s.clientCaFile !== undefined },
    limits: { maxBodyBytes: s.maxBodyBytes, requestTimeoutMs: s.requestTimeoutMs, maxConnections: s.maxConnections },
    start(deliverFrame) {
      deliverTo = deliverFrame;
    },
    notify(message: JsonRpcMessage) {
      if (!open) return;
      const e = buffer.push(message);
      for (const st of streams) st.send(e);
    },
    async close() {
      if (!open) return;
      open = false;
      for (const st of [...streams]) st.end();
      await server.close(CLOSE_GRACE_MS);
      resolveClosed();
    },
  };
}
