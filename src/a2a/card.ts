// The AgentCard projection (CKP-A2A profile §5.1, §5.2; docs/a2a.md "Agent card"): what an A2A client learns at
// /.well-known/agent-card.json. Only public facts: the Identity's name and version, a one-sentence description,
// the endpoint, the auth scheme's *kind*, and the skills' names, descriptions and tags. Never the personality
// beyond its first sentence, instructions, context files, tool schemas, file paths or secrets (profile §8).
import type { ResolvedManifest } from '../manifest/resolved.ts';

/** The annotation (on the Identity, or the Claw manifest) that replaces the summarized description. */
export const DESCRIPTION_ANNOTATION = 'a2a.description';
export const MAX_DESCRIPTION_CHARS = 200;

export interface CardOptions {
  /** Where the A2A JSON-RPC endpoint is reachable: `http://127.0.0.1:8080/a2a`. */
  endpointUrl: string;
  runtimeVersion: string;
  /** What the listener asks of a caller (docs/transports.md, HTTP "Authentication"). */
  security: { bearer: boolean; clientCert: boolean };
}

/** Profile §5.1 description rule: the explicit annotation, else the personality's first sentence, at most 200 chars. */
export function summarizeDescription(m: ResolvedManifest): string {
  const explicit = m.identity.annotations[DESCRIPTION_ANNOTATION] ?? m.annotations[DESCRIPTION_ANNOTATION];
  if (typeof explicit === 'string' && explicit.trim() !== '') return clip(explicit.trim());
  const personality = m.identity.spec.personality;
  if (typeof personality === 'string' && personality.trim() !== '') return clip(firstSentence(personality));
  return clip(m.description ?? `CKP agent ${m.identity.name}`);
}

function firstSentence(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const m = /^.*?[.!?](?=\s|$)/.exec(flat);
  return m ? m[0] : flat;
}

function clip(s: string): string {
  return s.length <= MAX_DESCRIPTION_CHARS ? s : `${s.slice(0, MAX_DESCRIPTION_CHARS - 1).trimEnd()}…`;
}

/**
 * A2A 1.0 AgentCard JSON. `supportedInterfaces`, one URL: JSON-RPC 1.0 first (preferred), HTTP+JSON 1.0 (its paths
 * below the URL), JSON-RPC 0.3. The 0.3 HTTP+JSON binding is not served, so it is not listed.
 */
export function buildAgentCard(m: ResolvedManifest, o: CardOptions): Record<string, unknown> {
  const schemes: Record<string, unknown> = {};
  const required: Record<string, { list: string[] }> = {};
  if (o.security.bearer) {
    schemes.bearer = { httpAuthSecurityScheme: { scheme: 'Bearer', description: 'A bearer token issued by the operator of this agent' } };
    required.bearer = { list: [] };
  }
  if (o.security.clientCert) {
    schemes.mtls = { mtlsSecurityScheme: { description: 'A client certificate signed by the CA the operator configured' } };
    required.mtls = { list: [] };
  }
  const card: Record<string, unknown> = {
    name: m.identity.name,
    description: summarizeDescription(m),
    version: m.identity.version ?? m.version ?? o.runtimeVersion,
    supportedInterfaces: [
      { url: o.endpointUrl, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: o.endpointUrl, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
      { url: o.endpointUrl, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
    ],
    provider: { organization: 'claw-edge runtime', url: 'https://github.com/clawkernel' },
    capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: false },
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain'],
    skills: m.skills.map((s) => agentSkill(s)),
  };
  if (Object.keys(schemes).length > 0) {
    card.securitySchemes = schemes;
    card.securityRequirements = [{ schemes: required }];
  }
  return card;
}

/** Profile §5.2: id and name from metadata.name, description copied, labels and tools_required flattened into tags. */
function agentSkill(s: ResolvedManifest['skills'][number]): Record<string, unknown> {
  const tags = [...Object.entries(s.labels).map(([k, v]) => `${k}:${v}`), ...((s.spec.tools_required as string[] | undefined) ?? []).map((t) => `tool:${t}`)];
  const description = typeof s.spec.description === 'string' ? s.spec.description : s.name;
  return { id: s.name, name: humanize(s.name), description, tags };
}

/** `daily-report` → `Daily report` (profile §5.2 "Humanized if needed"). */
function humanize(name: string): string {
  const words = name.replace(/[-_]+/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * The same card for an A2A 0.3 client (the 0.3 AgentCard: `url` + `preferredTransport` name the first 0.3
 * interface, `additionalInterfaces` all of them, `type`-tagged security schemes, `security`). The 1.0
 * `supportedInterfaces` stay in it, as the official SDK's server does: a 1.0 client that fetched the card without
 * `A2A-Version` still finds its interfaces.
 */
export function legacyAgentCard(card: Record<string, unknown>): Record<string, unknown> {
  const all = card.supportedInterfaces as { url: string; protocolBinding: string; protocolVersion: string }[];
  const old = all.filter((i) => i.protocolVersion === '0.3');
  const caps = card.capabilities as { streaming: boolean; pushNotifications: boolean };
  const schemes: Record<string, unknown> = {};
  const required: Record<string, string[]> = {};
  for (const [name, s] of Object.entries((card.securitySchemes ?? {}) as Record<string, Record<string, { scheme?: string; description?: string }>>)) {
    if (s.httpAuthSecurityScheme) schemes[name] = { type: 'http', ...s.httpAuthSecurityScheme };
    else if (s.mtlsSecurityScheme) schemes[name] = { type: 'mutualTLS', ...s.mtlsSecurityScheme };
    required[name] = [];
  }
  const { name, description, version, provider, defaultInputModes, defaultOutputModes, skills } = card;
  return {
    protocolVersion: '0.3.0',
    name,
    description,
    version,
    provider,
    url: old[0].url,
    preferredTransport: old[0].protocolBinding,
    additionalInterfaces: old.map((i) => ({ url: i.url, transport: i.protocolBinding })),
    capabilities: { streaming: caps.streaming, pushNotifications: caps.pushNotifications },
    defaultInputModes,
    defaultOutputModes,
    skills,
    supportsAuthenticatedExtendedCard: false,
    ...(Object.keys(schemes).length > 0 ? { securitySchemes: schemes, security: [required] } : {}),
    supportedInterfaces: all,
  };
}
