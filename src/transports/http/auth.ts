// Who may talk to the HTTP transport (docs/transports.md, HTTP "Authentication"): bearer tokens resolved from
// secret_refs (runtime profile §7) and/or a client certificate signed by the configured CA. Tokens are compared
// in constant time over their SHA-256 digests (equal length whatever was sent), every configured token is
// compared on every check, and no token value ever reaches a log line or a reply.
import type { IncomingMessage } from 'node:http';
import { nodeCrypto } from '../../node/lazy.ts';
import { isLoopback } from './settings.ts';

export type AuthOutcome = 'ok' | 'missing' | 'wrong';

export interface Authenticator {
  /** True when anything is configured: without it, only a loopback listener is allowed (settings.ts). */
  readonly configured: boolean;
  /**
   * `principal` on success: who authenticated — the secret_ref *name* of the bearer token that matched (never its
   * value), else the client certificate's subject CN; undefined when nothing is configured. The A2A channel's
   * user id (docs/a2a.md "Security").
   */
  check(req: IncomingMessage): { outcome: AuthOutcome; principal?: string; caller?: boolean };
}

/**
 * `tokens`: each bearer token with the secret_ref it was resolved from; `caller: true` for an A2A caller's token
 * (`auth.a2a_token_refs`), accepted only on routes that admit callers — never on the CKP endpoint.
 */
export function createAuthenticator(tokens: readonly { ref: string; value: string; caller?: boolean }[], requireClientCert: boolean): Authenticator {
  const crypto = nodeCrypto();
  const digest = (s: string | Buffer) => crypto.createHash('sha256').update(s).digest();
  const expected = tokens.map((t) => ({ ref: t.ref, digest: digest(t.value), caller: t.caller === true }));
  const bearer = (req: IncomingMessage): { outcome: AuthOutcome; principal?: string; caller?: boolean } => {
    if (expected.length === 0) return { outcome: 'ok' };
    const h = req.headers.authorization;
    if (typeof h !== 'string') return { outcome: 'missing' };
    const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(h);
    if (!m) return { outcome: 'wrong' };
    const got = digest(m[1]);
    let hit: { ref: string; caller: boolean } | undefined;
    // Every token is compared (no early exit): the time taken does not tell which one matched.
    for (const e of expected) if (crypto.timingSafeEqual(got, e.digest)) hit ??= e;
    return hit === undefined ? { outcome: 'wrong' } : { outcome: 'ok', principal: hit.ref, caller: hit.caller };
  };
  const cert = (req: IncomingMessage): { outcome: AuthOutcome; principal?: string } => {
    if (!requireClientCert) return { outcome: 'ok' };
    // The TLS server requests a certificate without rejecting the handshake, so a refusal is an HTTP status
    // (401) with a JSON-RPC body rather than a TLS alert the client cannot tell from a network failure.
    const sock = req.socket as { authorized?: boolean; getPeerCertificate?: () => { subject?: Record<string, unknown> } };
    const peer = sock.getPeerCertificate?.();
    if (sock.authorized === true) return { outcome: 'ok', principal: subjectName(peer?.subject) };
    return { outcome: peer && peer.subject ? 'wrong' : 'missing' };
  };
  return {
    configured: expected.length > 0 || requireClientCert,
    check(req) {
      const c = cert(req);
      if (c.outcome !== 'ok') return c;
      const b = bearer(req);
      return b.outcome === 'ok' ? { outcome: 'ok', principal: b.principal ?? c.principal, caller: b.caller } : b;
    },
  };
}

/** A certificate subject as a user id: its CN, else its fields `K=V` joined by `,`. */
function subjectName(subject: Record<string, unknown> | undefined): string | undefined {
  if (!subject) return undefined;
  const cn = subject.CN;
  if (typeof cn === 'string' && cn !== '') return cn;
  const all = Object.entries(subject).map(([k, v]) => `${k}=${String(v)}`).join(',');
  return all === '' ? undefined : all;
}

/** The peer's address is on this machine (the /healthz exception, docs/transports.md). */
export const fromLoopback = (req: IncomingMessage): boolean => isLoopback(req.socket.remoteAddress);
