// GET /.well-known/agent-card.json (A2A 1.0 §8.2 discovery): public, as A2A clients fetch it before they hold
// credentials; it says only what card.ts projects. The card's shape follows the A2A-Version header, as on the
// endpoint (1.0 §3.6: no header means 0.3): `1.0` gets the 1.0 AgentCard, none or `0.3` the 0.3 one. Not cached
// by intermediaries for long: a new manifest may change it.
import { sendJson } from '../transports/http/reply.ts';
import type { Route } from '../transports/http/server.ts';
import { legacyAgentCard } from './card.ts';

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
      const h = req.headers['a2a-version'];
      const v = (Array.isArray(h) ? h[0] : h)?.trim() ?? '';
      const legacy = v === '' || v === '0.3' || v === '0.3.0';
      sendJson(res, 200, legacy ? legacyAgentCard(c) : c, { 'cache-control': 'public, max-age=60', vary: 'A2A-Version' });
    },
  };
}
