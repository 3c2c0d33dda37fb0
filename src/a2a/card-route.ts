// GET /.well-known/agent-card.json (A2A 1.0 §8.2 discovery): public, as A2A clients fetch it before they hold
// credentials; it says only what card.ts projects. Not cached by intermediaries for long: a new manifest may
// change it.
import { sendJson } from '../transports/http/reply.ts';
import type { Route } from '../transports/http/server.ts';

export const AGENT_CARD_PATH = '/.well-known/agent-card.json';

export function agentCardRoute(card: () => Record<string, unknown> | undefined): Route {
  return {
    auth: 'public',
    handle(req, res) {
      req.resume();
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        sendJson(res, 405, { error: 'GET the agent card' }, { allow: 'GET, HEAD' });
        return;
      }
      const c = card();
      if (!c) {
        sendJson(res, 503, { error: 'the agent is not running (no session started)' }, { 'retry-after': '1' });
        return;
      }
      sendJson(res, 200, c, { 'cache-control': 'public, max-age=60' });
    },
  };
}
