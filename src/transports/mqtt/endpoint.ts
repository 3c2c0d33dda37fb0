// `mqtt://[user@]host[:port]/{swarm}/{agent}` and `mqtts://...` (TLS): the broker and the agent's place in the
// topic tree (topics.ts). Query parameters carry what an operator may want on a command line; claw.runtime.yaml
// (options.ts) carries the rest, and wins. Passwords are never accepted in the URL: they come from a secret_ref.
import { ClawError } from '../../protocol/errors.ts';
import { isTopicSegment } from './topics.ts';

export interface MqttEndpoint {
  tls: boolean;
  host: string;
  port: number;
  swarm: string;
  /** The agent's name in the swarm; optional for a client that only talks to others. */
  agent?: string;
  username?: string;
  /** Query parameters, for options.ts to merge (protocol, client_id, ca, password_ref, prefix, ...). */
  query: Record<string, string>;
}

export function parseMqttUrl(text: string): MqttEndpoint {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw new ClawError('usage', `not a URL: ${safe(text)}`);
  }
  const tls = u.protocol === 'mqtts:';
  if (!tls && u.protocol !== 'mqtt:') throw new ClawError('usage', `expected mqtt:// or mqtts://, got ${u.protocol}`);
  if (u.password) throw new ClawError('usage', 'a password in the MQTT URL is refused: use password_ref (a secret_ref) instead');
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (!host) throw new ClawError('usage', 'MQTT URL has no host');
  const parts = u.pathname.split('/').filter((p) => p !== '').map(decodeURIComponent);
  if (parts.length < 1 || parts.length > 2) throw new ClawError('usage', `MQTT URL path must be /{swarm} or /{swarm}/{agent}: ${safe(text)}`);
  for (const p of parts) if (!isTopicSegment(p)) throw new ClawError('usage', `"${p}" cannot be a topic level (no "/", "+", "#")`);
  const query: Record<string, string> = {};
  for (const [k, v] of u.searchParams) query[k] = v;
  if ('password' in query) throw new ClawError('usage', 'a password in the MQTT URL is refused: use password_ref (a secret_ref) instead');
  return {
    tls,
    host,
    port: u.port ? Number(u.port) : tls ? 8883 : 1883,
    swarm: parts[0]!,
    agent: parts[1],
    username: u.username ? decodeURIComponent(u.username) : undefined,
    query,
  };
}

/** The URL without credentials or query, for logs. */
export function describeEndpoint(e: MqttEndpoint): string {
  return `${e.tls ? 'mqtts' : 'mqtt'}://${e.host.includes(':') ? `[${e.host}]` : e.host}:${e.port}/${e.swarm}${e.agent ? `/${e.agent}` : ''}`;
}

function safe(text: string): string {
  // An unparsable URL may still hold user:password@; never echo it.
  return text.replace(/\/\/[^@/]*@/, '//***@');
}
