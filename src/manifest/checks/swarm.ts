// Swarm rules, spec §5.10.
import type { Checker } from './context.ts';
import { isObj, specOf } from './context.ts';

const S = '§5.10';

export function checkSwarm(c: Checker): void {
  const sw = c.m.swarm;
  const spec = specOf(sw);
  if (!sw || !spec || !Array.isArray(spec.agents)) return;

  spec.agents.forEach((agent: unknown, i: number) => {
    if (!isObj(agent)) return;
    // identity_ref: §4.2 draws Swarm "references → Identity[] (other agents)", while a manifest
    // declares exactly one Identity (§5.1). Peer agents' identities therefore live outside this
    // manifest, so an identity_ref is NOT required to resolve: it may name this manifest's own
    // identity (TV-L3-01 uses the Claw name, which is the generated identity name) or a peer's,
    // including a registry URI. Only the form is checked: a valid name or claw:// URI, and a URI
    // must address an identity (not e.g. claw://local/tool/x).
    c.refSyntax(sw, ['agents', i, 'identity_ref'], 'Identity', agent.identity_ref, S);
    // provider_ref selects the model this agent runs on; it must be one of the declared providers.
    if (agent.provider_ref !== undefined) c.ref(sw, ['agents', i, 'provider_ref'], 'Provider', agent.provider_ref, S);
  });
}
