// claw.initialize (spec §9.3.1): version negotiation, manifest, STARTING → READY, capabilities.
import { lazyAbort } from '../session-abort.ts';
import * as v from 'valibot';
import { ErrorCode, ProtocolError } from '../../protocol/errors.ts';
import { initializeParams, issuesData, type InitializeParams } from '../../protocol/wire.ts';
import { levelName, manifestLevel, negotiateCapabilities, type Level } from '../conformance.ts';
import { negotiateVersion, SUPPORTED_PROTOCOL_VERSIONS } from '../version.ts';
import type { ResolvedManifest } from '../../manifest/resolved.ts';
import { documentKey } from '../../manifest/loader.ts';
import type { AgentCore } from '../agent-core.ts';
import type { MethodSpec } from './index.ts';

export const initialize: MethodSpec = {
  level: 1,
  // INIT for the first session; STOPPED (and ERROR after a failed start) for a new one.
  states: ['INIT', 'STOPPED', 'ERROR'],
  // A repeated initialize (a session is READY) is checked like a first one before it is refused for the state.
  checkRequest: (params) => void checkInitializeRequest(params),
  async handler(params, _ctx, agent) {
    const { req, version } = checkInitializeRequest(params);
    const manifest = await chooseManifest(agent, req.manifest, version);
    return openSession(agent, manifest, version, req.capabilities, req.clientInfo);
  },
};

/**
 * The checks every claw.initialize gets, in whatever state it arrives: params (`-32602` with `data.issues`), then
 * the version (`-32001` with `data.supported`). Returns the request and the negotiated version.
 */
export function checkInitializeRequest(params: unknown): { req: InitializeParams; version: string } {
  const p = v.safeParse(initializeParams, params);
  if (!p.success) throw new ProtocolError(ErrorCode.InvalidParams, 'Invalid params for claw.initialize', issuesData(p.issues));
  const req = p.output;
  // Version first: an operator from the future gets -32001 whatever else its request holds (TV-L1-05).
  const version = negotiateVersion(req.protocolVersion);
  if (!version) {
    throw new ProtocolError(ErrorCode.ProtocolVersionNotSupported, 'Protocol version not supported', {
      supported: [...SUPPORTED_PROTOCOL_VERSIONS],
    });
  }
  return { req, version };
}

/**
 * STARTING → READY for `manifest` at the negotiated version, and the initialize result. Also how a
 * local channel (`claw chat`, the implicit CLI channel of profile §3) starts its session in-process.
 */
export async function openSession(agent: AgentCore, manifest: ResolvedManifest, version: string, requested: Record<string, unknown>, client: { name: string; version: string }) {
  const level = Math.min(manifestLevel(manifest), agent.runtimeLevel()) as Level;
  // §9.3.1 per group: what this runtime implements of what the manifest's primitives reach (docs/protocol.md).
  const capabilities = negotiateCapabilities(requested, agent.supportedGroups(manifestLevel(manifest)));
  await agent.startSession({ manifest, protocolVersion: version, level, capabilities, abort: lazyAbort() });
  agent.opts.log.info('session started', { client: client.name, clientVersion: client.version, protocolVersion: version, conformanceLevel: levelName(level) });
  return {
    protocolVersion: version,
    // §9.3.1: agentInfo.name from the Identity, version from the manifest's metadata.version.
    agentInfo: { name: manifest.identity.name, version: manifest.version ?? '0.0.0' },
    conformanceLevel: levelName(level),
    capabilities,
  };
}

/**
 * The launch manifest is authoritative: a manifest sent in initialize is validated (an invalid one is
 * refused) but never replaces it, so nothing sent over the wire can loosen its sandbox or policy.
 * Without a launch manifest, the one sent here is the agent.
 */
async function chooseManifest(agent: AgentCore, sent: unknown, version: string): Promise<ResolvedManifest> {
  const launch = agent.opts.launchManifest;
  // The launch file itself, sent again (what a client that read it does): validating it a second time would
  // give the same answer, so it is not done (ResolvedManifest.sourceKey says when that holds).
  if (launch?.sourceKey !== undefined && sameDocument(sent, launch.sourceKey)) return launch;
  const loaded = await agent.opts.loadWireManifest(sent, version);
  if (!loaded.manifest) {
    throw new ProtocolError(ErrorCode.InvalidParams, `Invalid params: the manifest has ${loaded.issues.length} issue(s)`, {
      issues: loaded.issues.map((i) => ({ path: i.path, message: i.message, rule: i.rule, ...(i.section ? { section: i.section } : {}) })),
    });
  }
  if (!launch) return loaded.manifest;
  if (loaded.manifest.name !== launch.name) {
    agent.opts.log.info('initialize manifest differs from the launch manifest; the launch manifest is used', {
      launch: launch.name,
      sent: loaded.manifest.name,
    });
  }
  return launch;
}

function sameDocument(sent: unknown, key: string): boolean {
  return typeof sent === 'object' && sent !== null && documentKey(sent) === key;
}
