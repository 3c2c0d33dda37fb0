// `capabilities.network.allowed_hosts` matching (spec §5.8). Pure.
//
// Rules (an entry is a bare host name: no scheme, port or path, else it never matches):
//   - `api.example.com` matches that name exactly; case and one trailing dot are ignored on both
//     sides, Unicode names are compared in their punycode (A-label) form, as `new URL()` gives them.
//   - `*.example.com` matches every subdomain at any depth (`a.example.com`, `a.b.example.com`) but
//     NOT `example.com` itself: list both to allow both. This is the TLS certificate reading of a
//     wildcard widened to any depth; allowing the apex implicitly would surprise whoever wrote it.
//   - `*` is only a wildcard as the whole first label; `*` alone or anywhere else matches nothing
//     (use `mode: allow-all` to allow every host).
//   - IP literals match only an entry naming the same address (compared canonically, so `::1`,
//     `[::1]` and `0:0:0:0:0:0:0:1` are one address); wildcards never match an IP literal.
// Ports are not part of the allowlist: an allowed host is allowed on any port.
import { canonicalIp } from './ip-ranges.ts';

/** Lower case, no brackets, no trailing dot, A-label form. */
export function normalizeHost(host: string): string {
  let h = host.trim().toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h.endsWith('.')) h = h.slice(0, -1);
  if (/[^\x00-\x7f]/.test(h)) {
    try {
      h = new URL(`http://${h}/`).hostname;
    } catch {
      return '';
    }
  }
  return h;
}

const LABELS = /^(?:[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?)(?:\.[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?)*$/;

export function hostAllowed(host: string, allowedHosts: readonly string[] | undefined): boolean {
  if (!allowedHosts || allowedHosts.length === 0) return false;
  const h = normalizeHost(host);
  if (h === '') return false;
  const ip = canonicalIp(h);
  for (const raw of allowedHosts) {
    const wild = raw.trim().startsWith('*.');
    const p = normalizeHost(wild ? raw.trim().slice(2) : raw);
    if (p === '') continue;
    if (ip !== null) {
      if (!wild && canonicalIp(p) === ip) return true;
      continue;
    }
    if (!LABELS.test(p) || canonicalIp(p) !== null) continue; // not a plain name, or an IP pattern
    if (wild ? h.endsWith(`.${p}`) : h === p) return true;
  }
  return false;
}
