// The fallback chain (spec §5.2: "Fallback providers, if declared, MUST be tried in array order.
// The runtime MUST NOT skip entries."). Order: the primary, then its `fallback` entries in array
// order, each followed depth-first by its own fallbacks; a provider already tried is not tried
// twice. Every entry is attempted in turn; a failure of any kind (unreachable, HTTP error,
// malformed reply, quota) moves to the next. Only the caller's abort stops the walk.
// When all fail: -32021 if every one was refused by a quota, else -32020 (runtime profile §4),
// with one record per provider in `data.providers`.
import type { ProviderClient } from '../kernel/ports.ts';
import type { ResolvedManifest, ResolvedPrimitive } from '../manifest/resolved.ts';
import { resolveRef } from '../manifest/refs.ts';
import { ErrorCode, ProtocolError } from '../protocol/errors.ts';
import { ProviderEndpoint } from './client.ts';
import type { ProviderDeps } from './deps.ts';
import { ProviderFailure } from './failure.ts';
import type { ModelRequest, ModelResponse } from './output-mode.ts';

type Entry = { p: ResolvedPrimitive } | { ref: string; why: string };

export function chainOrder(m: ResolvedManifest, primary: ResolvedPrimitive): Entry[] {
  const out: Entry[] = [];
  const seen = new Set<ResolvedPrimitive>();
  const visit = (p: ResolvedPrimitive) => {
    if (seen.has(p)) return;
    seen.add(p);
    out.push({ p });
    const fb = (p.spec as { fallback?: { provider_ref: string }[] }).fallback ?? [];
    for (const f of fb) {
      const r = resolveRef(m, 'Provider', f.provider_ref);
      if (r.ok) visit(r.primitive);
      else out.push({ ref: f.provider_ref, why: r.reason }); // reported as that entry's failure, never skipped silently
    }
  };
  visit(primary);
  return out;
}

export interface FailureRecord {
  provider: string;
  reason: string;
  message: string;
  status?: number;
  limit?: string;
  /** The endpoint, without credentials or query (publicUrl). */
  url?: string;
  /** The server's own error message, cleaned (http.ts serverMessage). */
  server_message?: string;
}

/** An endpoint as it may be shown: no user:password, no query or fragment (a key can hide in either). */
export function publicUrl(endpoint: string): string {
  try {
    const u = new URL(endpoint);
    if (u.protocol === 'file:') return endpoint.split('?')[0]!;
    return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}`;
  } catch {
    return endpoint.replace(/\/\/[^/@]*@/, '//').split(/[?#]/)[0]!;
  }
}

export type Chain = ProviderClient & {
  /** Provider names in the order they are tried. */
  order: string[];
  /** Checks every entry without sending a request (rules files, secrets); one record per problem. */
  prepare(): Promise<FailureRecord[]>;
};

const record = (name: string, err: unknown, endpoint?: string): FailureRecord => {
  const f = err instanceof ProviderFailure ? err : undefined;
  const rec: FailureRecord = { provider: name, reason: f?.reason ?? 'internal', message: !f ? `${name}: internal error` : f.message.startsWith(`${name}: `) ? f.message : `${name}: ${f.message}` };
  if (f?.status !== undefined) rec.status = f.status;
  if (typeof f?.detail?.limit === 'string') rec.limit = f.detail.limit;
  // The server's own words, and where it is, when it said something (the record stays as small as it was otherwise).
  if (typeof f?.detail?.server_message === 'string') {
    rec.server_message = f.detail.server_message;
    if (endpoint !== undefined) rec.url = publicUrl(endpoint);
  }
  return rec;
};

export function createChain(deps: ProviderDeps, primary: ResolvedPrimitive = deps.manifest.providers[0]): Chain {
  const order = chainOrder(deps.manifest, primary);
  const endpoints = new Map<ResolvedPrimitive, ProviderEndpoint>();
  const endpoint = (p: ResolvedPrimitive) => endpoints.get(p) ?? endpoints.set(p, new ProviderEndpoint(p, deps)).get(p)!;
  return {
    order: order.map((e) => ('p' in e ? e.p.name : e.ref)),
    async prepare() {
      const out: FailureRecord[] = [];
      for (const e of order) {
        if (!('p' in e)) out.push({ provider: e.ref, reason: 'config', message: `fallback ${e.ref}: ${e.why}` });
        else await endpoint(e.p).prepare().catch((err) => out.push(record(e.p.name, err)));
      }
      return out;
    },
    async complete(req: ModelRequest): Promise<ModelResponse> {
      const failures: FailureRecord[] = [];
      const urls = new Map<string, string>();
      for (const e of order) {
        if (!('p' in e)) {
          failures.push({ provider: e.ref, reason: 'config', message: `fallback ${e.ref}: ${e.why}` });
          continue;
        }
        try {
          const r: ModelResponse = await endpoint(e.p).complete(req);
          // The user is told which provider failed before this one answered, and where (docs/providers.md).
          return failures.length > 0 ? { ...r, fallbacks: failures.map((f) => ({ ...f, url: f.url ?? urls.get(f.provider) })) } : r;
        } catch (err) {
          if (req.signal.aborted) throw req.signal.reason ?? err;
          const url = (e.p.spec as { endpoint?: string }).endpoint;
          const rec = record(e.p.name, err, url);
          if (url !== undefined) urls.set(e.p.name, publicUrl(url));
          failures.push(rec);
          const known = err instanceof ProviderFailure;
          deps.log?.[known ? 'warn' : 'error']('provider failed', { provider: e.p.name, reason: rec.reason, status: rec.status, error: known ? undefined : String(err) });
        }
      }
      const allQuota = failures.every((f) => f.reason === 'quota');
      const summary = failures.map((f) => f.message).join('; ');
      throw allQuota
        ? new ProtocolError(ErrorCode.ProviderQuotaExceeded, `Provider quota exceeded: ${summary}`, { providers: failures })
        : new ProtocolError(ErrorCode.ProviderUnavailable, `Provider unavailable: ${summary}`, { providers: failures });
    },
  };
}
