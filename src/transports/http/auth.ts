// Who may talk to the HTTP transport (docs/transports.md, HTTP "Authentication"): bearer tokens resolved from
// secret_refs (runtime profile §7) and/or a client certificate signed by the configured CA. Tokens are compared
// in constant time over their SHA-256 digests (equal length whatever was sent), every configured token is
// compared on every check, and no token value ever reaches a log line or a reply.
import type { IncomingMessage } from 'node:http';
import { nodeCrypto } from '../../node/lazy.ts';
import { isLoopback } from './settings.ts';

export type AuthOutcome = 'ok' | 'missing' | 'wrong';

export interface AuthResult {
  outcome: AuthOutcome;
  /** Who authenticated: a bearer token's secret_ref name, or `cn:<CN>` (else `dn:<K=V,…>`) for a certificate. */
  principal?: string;
  /** An A2A caller's credential: accepted only on routes that admit callers, never on the CKP endpoint. */
  caller?: boolean;
}

export interface Authenticator {
  /** True when anything is configured: without it, only a loopback listener is allowed (settings.ts). */
  readonly configured: boolean;
  /**
   * `principal` on success: who authenticated — the secret_ref *name* of the bearer token that matched (never its
   * value), else the client certificate's subject, prefixed (`cn:`) so no certificate reads as a token's name;
   * undefined when nothing is configured. The A2A channel's user id (docs/a2a.md "Security").
   * `callersServed`: the listener serves A2A; a certificate then is an operator's only if its CN is listed.
   */
  check(req: IncomingMessage, callersServed?: boolean): AuthResult;
}

/**
 * `tokens`: each bearer token with the secret_ref it was resolved from; `caller: true` for an A2A caller's token
 * (`auth.a2a_token_refs`), accepted only on routes that admit callers — never on the CKP endpoint.
 * `operatorCns`: the client-certificate CNs that are operators on a listener serving A2A (`auth.operator_cns`);
 * any other certificate the CA signed is an A2A caller there, as a partner's token is.
 */
export function createAuthenticator(tokens: readonly { ref: string; value: string; caller?: boolean }[], requireClientCert: boolean, operatorCns: readonly string[] = []): Authenticator {
  const crypto = nodeCrypto();
  const digest = (s: string | Buffer) => crypto.createHash('sha256').update(s).digest();
  const expected = tokens.map((t) => ({ ref: t.ref, digest: digest(t.value), caller: t.caller === true }));
  const bearer = (req: IncomingMessage): AuthResult => {
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
  const cert = (req: IncomingMessage): AuthResult & { operator?: boolean } => {
    if (!requireClientCert) return { outcome: 'ok' };
    // The TLS server requests a certificate without rejecting the handshake, so a refusal is an HTTP status
    // (401) with a JSON-RPC body rather than a TLS alert the client cannot tell from a network failure.
    const sock = req.socket as { authorized?: boolean; getPeerCertificate?: () => { subject?: Record<string, unknown> } };
    const peer = sock.getPeerCertificate?.();
    if (sock.authorized === true) {
      const cn = peer?.subject?.CN;
      return { outcome: 'ok', principal: subjectName(peer?.subject), operator: typeof cn === 'string' && operatorCns.includes(cn) };
    }
    return { outcome: peer && peer.subject ? 'wrong' : 'missing' };
  };
  return {
    configured: expected.length > 0 || requireClientCert,
    check(req, callersServed = false) {
      const c = cert(req);
      if (c.outcome !== 'ok') return c;
      const b = bearer(req);
      if (b.outcome !== 'ok') return b;
      // The credential that names the principal says what it is: the token when both are required.
      if (b.principal !== undefined) return { outcome: 'ok', principal: b.principal, caller: b.caller };
      // Operator only when listed: a certificate with no CN (an empty subject, a SAN-only one) is a caller too.
      return { outcome: 'ok', principal: c.principal, caller: callersServed && !c.operator };
    },
  };
}

/**
 * A certificate subject as a user id: `cn:<CN>`, else `dn:` and its fields `K=V` joined by `,`. The prefix keeps
 * certificates apart from token refs and from `local` (no colon in either: settings.ts).
 */
export function subjectName(subject: Record<string, unknown> | undefined): string | undefined {
  if (!subject) return undefined;
  const cn = subject.CN;
  if (typeof cn === 'string' && cn !== '') return `cn:${cn}`;
  // Separators in values escaped (RFC 4514 style): two different subjects never read as one caller.
  const all = Object.entries(subject).map(([k, v]) => `${k}=${String(v).replace(/[\\,=+]/g, (ch) => `\\${ch}`)}`).join(',');
  return all === '' ? undefined : `dn:${all}`;
}

/** The peer's address is on this machine (the /healthz exception, docs/transports.md). */
export const fromLoopback = (req: IncomingMessage): boolean => isLoopback(req.socket.remoteAddress);
