// claw:// URIs, spec §7 (ABNF, RFC 5234):
//
//   claw-uri      = claw-local / claw-registry
//   claw-local    = "claw://local/" kind "/" name [ "@" version ]
//   claw-registry = "claw://registry/" namespace "/" name "@" version
//   kind          = "identity" / "provider" / "channel" / "tool" / "skill" / "memory"
//                 / "world-model" / "sandbox" / "policy" / "swarm" / "telemetry"
//   name          = 1*63( ALPHA / DIGIT / "-" )
//   namespace     = 1*63( ALPHA / DIGIT / "-" / "." )
//   version       = semver
//   semver        = 1*DIGIT "." 1*DIGIT "." 1*DIGIT [ "-" pre-release ]
//   pre-release   = 1*( ALPHA / DIGIT / "-" / "." )
//   claw-alias    = "claw://" kind "/" name          ; manifest-only, resolved to claw://local/
//
// Read exactly: ALPHA/DIGIT are ASCII only (RFC 5234 core rules); the alias form carries no
// version; registry URIs always do; no query, fragment, percent-encoding or extra segments.
// Quoted ABNF literals ("claw://local/", kind names) are case-insensitive per RFC 5234 §2.3
// (and URI schemes are case-insensitive per RFC 3986 §3.1), so `CLAW://Local/Tool/x` conforms;
// the canonical form lower-cases those literals. name, namespace and version are kept verbatim
// (primitive names are case-sensitive).
import type { PrimitiveKind } from './kinds.ts';
import { PRIMITIVE_KINDS, URI_KIND } from './kinds.ts';
import { parseVersion } from '../protocol/semver.ts';

export type ClawUri =
  | {
      form: 'local';
      /** URI kind segment, lower-case, e.g. 'world-model'. */
      kind: string;
      name: string;
      version?: string;
      canonical: string;
    }
  | { form: 'registry'; namespace: string; name: string; version: string; canonical: string };

export type ClawUriParse = { ok: true; uri: ClawUri; alias: boolean } | { ok: false; reason: string };

const SCHEME = 'claw://';
const NAME_MAX = 63;

/** URI kind segments of the ABNF `kind` rule, in spec order. */
export const URI_KINDS: readonly string[] = PRIMITIVE_KINDS.map((k) => URI_KIND[k]);

const KIND_BY_URI_KIND: ReadonlyMap<string, PrimitiveKind> = new Map(
  PRIMITIVE_KINDS.map((k) => [URI_KIND[k], k] as const),
);

/** The primitive kind a URI kind segment names (`world-model` → `WorldModel`), if any. */
export function primitiveKindOf(uriKind: string): PrimitiveKind | undefined {
  return KIND_BY_URI_KIND.get(uriKind.toLowerCase());
}

/** True when `s` uses the claw:// scheme (scheme compared case-insensitively, RFC 3986 §3.1). */
export function isClawUri(s: string): boolean {
  return typeof s === 'string' && s.slice(0, SCHEME.length).toLowerCase() === SCHEME;
}

const isAlpha = (c: number) => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;

/** Describe a character for error messages, making invisible and non-ASCII ones explicit. */
function showChar(ch: string): string {
  const cp = ch.codePointAt(0)!;
  const hex = `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
  if (cp < 0x21 || cp === 0x7f) return hex;
  if (cp > 0x7e) return `'${ch}' (${hex}, non-ASCII)`;
  return `'${ch}'`;
}

/** First character of `s` not accepted by `ok`, with its 1-based position, or undefined. */
function firstBad(s: string, ok: (c: number) => boolean): { ch: string; at: number } | undefined {
  let at = 0;
  for (const ch of s) {
    // Iterate code points so astral characters are reported whole.
    at++;
    if (ch.length !== 1 || !ok(ch.charCodeAt(0))) return { ch, at };
  }
  return undefined;
}

function checkToken(
  what: 'name' | 'namespace',
  value: string,
  ok: (c: number) => boolean,
  allowed: string,
): string | undefined {
  if (value === '') return `${what} is empty`;
  const bad = firstBad(value, ok);
  if (bad) return `${what} '${value}' has invalid character ${showChar(bad.ch)} at position ${bad.at} (allowed: ${allowed})`;
  if (value.length > NAME_MAX) return `${what} '${value}' is ${value.length} characters long (maximum ${NAME_MAX})`;
  return undefined;
}

/** Validate the ABNF `name` rule; returns a reason when invalid. */
export function checkName(name: string): string | undefined {
  return checkToken('name', name, (c) => isAlpha(c) || isDigit(c) || c === 0x2d, "ASCII letters, digits, '-'");
}

/** True when `s` matches the ABNF `name` rule (1*63 ASCII ALPHA / DIGIT / "-"). */
export function isValidName(s: string): boolean {
  return typeof s === 'string' && checkName(s) === undefined;
}

function checkNamespace(ns: string): string | undefined {
  return checkToken(
    'namespace',
    ns,
    (c) => isAlpha(c) || isDigit(c) || c === 0x2d || c === 0x2e,
    "ASCII letters, digits, '-', '.'",
  );
}

/**
 * Validate the ABNF `semver` rule (the grammar is src/protocol/semver.ts, one parser for every CKP version);
 * returns a reason when invalid, saying what is wrong.
 */
export function checkVersion(v: string): string | undefined {
  if (parseVersion(v)) return undefined;
  const shape = "expected MAJOR.MINOR.PATCH[-pre-release], e.g. '1.2.0' or '2.0.0-rc.1'";
  if (v === '') return `version is empty (${shape})`;
  if (v.includes('@')) return `version '${v}' has invalid character '@' (a single '@' separates name and version)`;
  const dash = v.indexOf('-');
  const core = dash < 0 ? v : v.slice(0, dash);
  const parts = core.split('.');
  if (parts.length !== 3 || parts.some((p) => p === '' || !/^[0-9]+$/.test(p))) {
    const plus = v.indexOf('+');
    if (plus >= 0 && dash < 0) return `version '${v}' has build metadata ('+...'), which the URI grammar does not allow`;
    return `version '${v}' is not semver (${shape})`;
  }
  if (dash >= 0) {
    const pre = v.slice(dash + 1);
    if (pre === '') return `version '${v}' has an empty pre-release after '-'`;
    const bad = firstBad(pre, (c) => isAlpha(c) || isDigit(c) || c === 0x2d || c === 0x2e);
    if (bad) {
      const extra = bad.ch === '+' ? ' (build metadata is not allowed)' : '';
      return `version '${v}' has invalid character ${showChar(bad.ch)} in pre-release '${pre}'${extra} (allowed: ASCII letters, digits, '-', '.')`;
    }
  }
  return `version '${v}' is not semver (${shape})`;
}

function unknownKind(kind: string, where: string): string {
  if (kind === '') return `kind segment is empty ${where}`;
  return `unknown kind '${kind}' ${where} (expected one of: ${URI_KINDS.join(', ')})`;
}

/** Split `name[@version]`; a second '@' is reported by the version check as an invalid character. */
function splitVersion(last: string): { name: string; version?: string } {
  const at = last.indexOf('@');
  return at < 0 ? { name: last } : { name: last.slice(0, at), version: last.slice(at + 1) };
}

const fail = (reason: string): ClawUriParse => ({ ok: false, reason });

/**
 * Parse a claw:// URI per spec §7. Alias URIs (`claw://{kind}/{name}`) are resolved to their
 * canonical `claw://local/{kind}/{name}` form and flagged with `alias: true`.
 */
export function parseClawUri(s: string): ClawUriParse {
  if (typeof s !== 'string') return fail('not a string');
  if (!isClawUri(s)) return fail(`must start with '${SCHEME}'`);
  const rest = s.slice(SCHEME.length);
  if (rest === '') return fail(`nothing after '${SCHEME}' (expected local/{kind}/{name}, registry/{namespace}/{name}@{version} or {kind}/{name})`);
  for (const ch of ['?', '#']) {
    const i = rest.indexOf(ch);
    if (i >= 0) return fail(`${ch === '?' ? 'query' : 'fragment'} ('${ch}...') is not allowed in claw:// URIs`);
  }
  const segs = rest.split('/');
  const authority = segs[0].toLowerCase();

  if (authority === 'local') {
    if (segs.length < 3) return fail("'claw://local/' must be followed by {kind}/{name}[@{version}]");
    if (segs.length > 3) return fail(`unexpected extra path segment '/${segs.slice(3).join('/')}' (expected claw://local/{kind}/{name}[@{version}])`);
    const kind = segs[1].toLowerCase();
    if (!KIND_BY_URI_KIND.has(kind)) return fail(unknownKind(segs[1], 'after claw://local/'));
    const { name, version } = splitVersion(segs[2]);
    const nameErr = checkName(name);
    if (nameErr) return fail(nameErr);
    if (version !== undefined) {
      const vErr = checkVersion(version);
      if (vErr) return fail(vErr);
    }
    const canonical = `${SCHEME}local/${kind}/${name}${version !== undefined ? `@${version}` : ''}`;
    const uri: ClawUri = version !== undefined ? { form: 'local', kind, name, version, canonical } : { form: 'local', kind, name, canonical };
    return { ok: true, uri, alias: false };
  }

  if (authority === 'registry') {
    if (segs.length < 3) return fail("'claw://registry/' must be followed by {namespace}/{name}@{version}");
    if (segs.length > 3) return fail(`unexpected extra path segment '/${segs.slice(3).join('/')}' (expected claw://registry/{namespace}/{name}@{version})`);
    const namespace = segs[1];
    const nsErr = checkNamespace(namespace);
    if (nsErr) return fail(nsErr);
    const { name, version } = splitVersion(segs[2]);
    const nameErr = checkName(name);
    if (nameErr) return fail(nameErr);
    if (version === undefined) return fail(`registry URIs must include '@{version}' (spec §7), e.g. claw://registry/${namespace}/${name}@1.0.0`);
    const vErr = checkVersion(version);
    if (vErr) return fail(vErr);
    return { ok: true, uri: { form: 'registry', namespace, name, version, canonical: `${SCHEME}registry/${namespace}/${name}@${version}` }, alias: false };
  }

  // Alias form: claw://{kind}/{name}, no version.
  const kind = authority;
  if (!KIND_BY_URI_KIND.has(kind)) {
    return fail(unknownKind(segs[0], "after 'claw://'") + "; or use the 'local' or 'registry' authority");
  }
  if (segs.length < 2) return fail(`alias 'claw://${segs[0]}' must be followed by /{name}`);
  if (segs.length > 2) return fail(`unexpected extra path segment '/${segs.slice(2).join('/')}' (expected alias claw://{kind}/{name})`);
  const { name, version } = splitVersion(segs[1]);
  const nameErr = checkName(name);
  if (nameErr) return fail(nameErr);
  if (version !== undefined) {
    return fail(`the alias form claw://{kind}/{name} cannot carry '@{version}'; use claw://local/${kind}/${name}@${version}`);
  }
  return { ok: true, uri: { form: 'local', kind, name, canonical: `${SCHEME}local/${kind}/${name}` }, alias: true };
}
