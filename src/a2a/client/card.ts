// Reading a remote agent card (A2A 1.0 §8 AgentCard; 0.3 §5.5) and choosing how to talk to it. Both shapes:
//   1.0: supportedInterfaces[{url, protocolBinding, protocolVersion}]
//   0.3: url + preferredTransport (default JSONRPC) + protocolVersion, additionalInterfaces[{url, transport}]
// A card carrying both (the SDK serves such a card to 0.3 clients) is read by its 1.0 list. This client
// speaks the JSON-RPC binding only, 1.0 preferred, 0.3 as the fallback (docs/a2a.md "Client").
import { A2aClientError } from './errors.ts';

export type ClientVersion = '1.0' | '0.3';

export interface CardInterface {
  url: string;
  binding: string;
  version: string;
}

/** What this client reads of a card; `raw` is the card as received, for `claw a2a card`. */
export interface RemoteCard {
  name: string;
  description?: string;
  version?: string;
  interfaces: CardInterface[];
  streaming: boolean;
  /** Security scheme names the card lists (kinds only). */
  securitySchemes: string[];
  skills: { id: string; name?: string; description?: string }[];
  raw: Record<string, unknown>;
}

export interface Endpoint {
  url: string;
  version: ClientVersion;
}

const str = (x: unknown): string | undefined => (typeof x === 'string' && x !== '' ? x : undefined);
const obj = (x: unknown): Record<string, unknown> | undefined => (x && typeof x === 'object' && !Array.isArray(x) ? (x as Record<string, unknown>) : undefined);

/** The card's JSON, checked for the fields this client needs; `cardUrl` resolves relative interface URLs. */
export function parseCard(json: unknown, cardUrl: string): RemoteCard {
  const c = obj(json);
  const bad = (why: string) => new A2aClientError('card', `the agent card at ${cardUrl} ${why}`);
  if (!c) throw bad('is not a JSON object');
  const name = str(c.name);
  if (!name) throw bad('has no name');
  const interfaces: CardInterface[] = [];
  const add = (url: unknown, binding: unknown, version: unknown) => {
    const u = str(url);
    if (!u) return;
    let abs: string;
    try {
      abs = new URL(u, cardUrl).href;
    } catch {
      return;
    }
    interfaces.push({ url: abs, binding: str(binding) ?? 'JSONRPC', version: str(version) ?? '' });
  };
  if (Array.isArray(c.supportedInterfaces)) {
    for (const i of c.supportedInterfaces) add(obj(i)?.url, obj(i)?.protocolBinding, obj(i)?.protocolVersion);
  } else {
    // 0.3: one version for the whole card; the main URL's transport first, then the others.
    add(c.url, c.preferredTransport, c.protocolVersion ?? '0.3');
    if (Array.isArray(c.additionalInterfaces)) for (const i of c.additionalInterfaces) add(obj(i)?.url, obj(i)?.transport, c.protocolVersion ?? '0.3');
  }
  if (interfaces.length === 0) throw bad('lists no interface (supportedInterfaces, or url)');
  const skills = Array.isArray(c.skills)
    ? c.skills.flatMap((s) => {
        const id = str(obj(s)?.id);
        return id ? [{ id, name: str(obj(s)?.name), description: str(obj(s)?.description) }] : [];
      })
    : [];
  return {
    name,
    description: str(c.description),
    version: str(c.version),
    interfaces,
    streaming: obj(c.capabilities)?.streaming === true,
    securitySchemes: Object.keys(obj(c.securitySchemes) ?? {}),
    skills,
    raw: c,
  };
}

/** The dialect a protocolVersion string names: 1.x is the 1.0 wire, 0.3.x the 0.3 wire; others unknown. */
export function dialectOf(version: string): ClientVersion | undefined {
  if (/^1(\.\d+)*$/.test(version)) return '1.0';
  if (/^0\.3(\.\d+)*$/.test(version)) return '0.3';
  return undefined;
}

/** The JSON-RPC interface to use: the first 1.0 one, else the first 0.3 one. */
export function pickEndpoint(card: RemoteCard, cardUrl: string): Endpoint {
  const rpc = card.interfaces.filter((i) => i.binding.toUpperCase() === 'JSONRPC');
  for (const want of ['1.0', '0.3'] as const) {
    const hit = rpc.find((i) => dialectOf(i.version) === want);
    if (hit) return { url: hit.url, version: want };
  }
  const offered = card.interfaces.map((i) => `${i.binding} ${i.version || '?'}`).join(', ');
  throw new A2aClientError('no-interface', `the agent card at ${cardUrl} offers no JSON-RPC interface of A2A 1.0 or 0.3 (it offers: ${offered})`);
}
