// Reference resolution between primitives: `sandbox_ref`, `policy_ref`, `provider_ref`,
// `identity_ref`, `memory_ref`, `world_model_ref`, `skill_ref`, skill `tools_required[]`, ...
// A ref is either a plain primitive name or a claw:// URI (spec §7): a canonical local URI
// (`claw://local/{kind}/{name}[@{version}]`) or an alias (`claw://{kind}/{name}`). Registry URIs
// name something outside the manifest, so they never resolve to a declared primitive here.
import type { PrimitiveKind } from './kinds.ts';
import { URI_KIND } from './kinds.ts';
import type { ResolvedManifest, ResolvedPrimitive } from './resolved.ts';
import type { ClawUri } from './uri.ts';
import { checkName, isClawUri, parseClawUri } from './uri.ts';

/** Why a ref did not resolve; `ref-${failure}` is the issue rule id used by the cross-checks. */
export type RefFailure =
  | 'invalid-uri' // starts with claw:// but does not match the §7 grammar
  | 'invalid-name' // plain name that does not match the §7 `name` rule
  | 'wrong-kind' // claw://local/{kind}/... with a kind other than the one expected
  | 'not-local' // claw://registry/... — not a declared primitive of this manifest
  | 'unresolved' // well-formed, but no declared primitive of that kind has that name
  | 'version-mismatch'; // URI has @version and the primitive's metadata.version differs

/** A ref taken apart, before looking anything up. */
export type ParsedRef =
  | { ok: true; name: string; version?: string; uri?: ClawUri; alias: boolean }
  | { ok: false; failure: RefFailure; reason: string; uri?: ClawUri };

export type RefResolution =
  | { ok: true; primitive: ResolvedPrimitive; uri?: ClawUri }
  | { ok: false; failure: RefFailure; reason: string; uri?: ClawUri };

/** Declared primitives of one kind, in manifest order. */
export function declaredOfKind(m: ResolvedManifest, kind: PrimitiveKind): ResolvedPrimitive[] {
  const one = (p?: ResolvedPrimitive) => (p ? [p] : []);
  switch (kind) {
    case 'Identity':
      return one(m.identity);
    case 'Provider':
      return m.providers;
    case 'Channel':
      return m.channels;
    case 'Tool':
      return m.tools;
    case 'Skill':
      return m.skills;
    case 'Memory':
      return one(m.memory);
    case 'WorldModel':
      return m.worldModels;
    case 'Sandbox':
      return one(m.sandbox);
    case 'Policy':
      return m.policies;
    case 'Swarm':
      return one(m.swarm);
    case 'Telemetry':
      return one(m.telemetry);
  }
}

/**
 * Syntax-only: split a ref of the expected kind into name (+ version for local URIs). Catches
 * malformed URIs, URIs of another kind, registry URIs and plain names outside the `name` rule.
 */
export function parseRef(ref: string, kind: PrimitiveKind): ParsedRef {
  if (isClawUri(ref)) {
    const parsed = parseClawUri(ref);
    if (!parsed.ok) return { ok: false, failure: 'invalid-uri', reason: `'${ref}' is not a valid claw:// URI: ${parsed.reason}` };
    const uri = parsed.uri;
    if (uri.form === 'registry') {
      return {
        ok: false,
        failure: 'not-local',
        reason: `'${ref}' is a registry URI; it does not name a ${kind} declared in this manifest (use its name or claw://local/${URI_KIND[kind]}/{name})`,
        uri,
      };
    }
    if (uri.kind !== URI_KIND[kind]) {
      return {
        ok: false,
        failure: 'wrong-kind',
        reason: `'${ref}' names a ${uri.kind}, expected a ${kind} (claw://local/${URI_KIND[kind]}/{name})`,
        uri,
      };
    }
    return uri.version !== undefined
      ? { ok: true, name: uri.name, version: uri.version, uri, alias: parsed.alias }
      : { ok: true, name: uri.name, uri, alias: parsed.alias };
  }
  const bad = checkName(ref);
  if (bad) {
    const at = ref.indexOf('@');
    const hint =
      at > 0 && checkName(ref.slice(0, at)) === undefined
        ? `; to pin a version use claw://local/${URI_KIND[kind]}/${ref}`
        : '';
    return { ok: false, failure: 'invalid-name', reason: `'${ref}' is neither a primitive name nor a claw:// URI: ${bad}${hint}` };
  }
  return { ok: true, name: ref, alias: false };
}

function declaredList(kind: PrimitiveKind, prims: ResolvedPrimitive[]): string {
  if (prims.length === 0) return `no ${kind} is declared`;
  return `declared: ${prims.map((p) => p.name).join(', ')}`;
}

/**
 * Resolve `ref` to a declared primitive of `kind`. Returns the primitive, or the failure and a
 * message-ready reason (unknown names list the declared names of that kind).
 */
export function resolveRef(m: ResolvedManifest, kind: PrimitiveKind, ref: string): RefResolution {
  const parsed = parseRef(ref, kind);
  if (!parsed.ok) return parsed;
  const prims = declaredOfKind(m, kind);
  const found = prims.find((p) => p.name === parsed.name);
  if (!found) {
    return {
      ok: false,
      failure: 'unresolved',
      reason: `no ${kind} named '${parsed.name}' (${declaredList(kind, prims)})`,
      uri: parsed.uri,
    };
  }
  // A version can only be compared when both sides have one; metadata.version is optional.
  if (parsed.version !== undefined && found.version !== undefined && parsed.version !== found.version) {
    return {
      ok: false,
      failure: 'version-mismatch',
      reason: `'${ref}' asks for version ${parsed.version}, but ${kind} '${found.name}' is version ${found.version}`,
      uri: parsed.uri,
    };
  }
  return parsed.uri ? { ok: true, primitive: found, uri: parsed.uri } : { ok: true, primitive: found };
}
