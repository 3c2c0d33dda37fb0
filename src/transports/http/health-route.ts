// GET /healthz (docs/transports.md, HTTP "Health"): liveness for a container orchestrator or a systemd watchdog.
// The state comes from the kernel through the router, as a claw.status request would (spec §9.3.1), so the probe
// shows what an operator would see and the transport needs no view into the kernel. Open to peers on this
// machine; from elsewhere it needs the same credentials as the CKP endpoint.
// 200 while the runtime answers and is not in ERROR; 503 in ERROR, or when the router does not answer in time.
// `?ready` is the readiness form: 200 only in READY.
import type { InboundFrame } from '../../kernel/ports.ts';
import { ErrorCode } from '../../protocol/errors.ts';
import type { Route } from './server.ts';
import { refuse, sendJson } from './reply.ts';

const PROBE_TIMEOUT_MS = 2_000;

export function healthRoute(deliver: () => ((frame: InboundFrame) => void) | undefined): Route {
  let seq = 0;
  return {
    auth: 'loopback-open',
    handle(req, res) {
      req.resume();
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        refuse(res, 405, ErrorCode.InvalidRequest, 'GET /healthz', { headers: { allow: 'GET, HEAD' } });
        return;
      }
      const ready = /[?&]ready(=|&|$)/.test(req.url ?? '');
      const d = deliver();
      if (!d) {
        sendJson(res, 503, { state: 'UNAVAILABLE' });
        return;
      }
      let done = false;
      const timer = setTimeout(() => finish(503, { state: 'UNRESPONSIVE' }), PROBE_TIMEOUT_MS);
      const finish = (status: number, body: unknown) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        sendJson(res, status, body, { 'cache-control': 'no-store' });
      };
      d({
        payload: { text: `{"jsonrpc":"2.0","id":"healthz-${++seq}","method":"claw.status"}` },
        reply(msg) {
          const r = (Array.isArray(msg) ? msg[0] : msg) as { result?: { state?: string; uptime_ms?: number }; error?: { data?: { state?: string } } };
          // Before the first claw.initialize the kernel refuses claw.status with the state in error.data (INIT).
          const state = r.result?.state ?? r.error?.data?.state ?? 'UNKNOWN';
          const ok = ready ? state === 'READY' : state !== 'ERROR' && state !== 'UNKNOWN';
          finish(ok ? 200 : 503, r.result ? { state, uptime_ms: r.result.uptime_ms } : { state });
        },
      });
    },
  };
}
