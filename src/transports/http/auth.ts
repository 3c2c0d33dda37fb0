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
  check(req: IncomingMessage): AuthOutcome;
}

export function createAuthenticator(tokens: readonly string[], requireClientCert: boolean): Authenticator {
  const crypto = nodeCrypto();
  const digest = (s: string | Buffer) => crypto.createHash('sha256').update(s).digest();
  const expected = tokens.map((t) => digest(t));
  const bearer = (req: IncomingMessage): AuthOutcome => {
    if (expected.length === 0) return 'ok';
    const h = req.headers.authorization;
    if (typeof h !== 'string') return 'missing';
    const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(h);
    if (!m) return 'wrong';
    const got = digest(m[1]);
    let match = false;
    for (const e of expected) match = crypto.timingSafeEqual(got, e) || match;
    return match ? 'ok' : 'wrong';
  };
  const cert = (req: IncomingMessage): AuthOutcome => {
    if (!requireClientCert) return 'ok';
    // The TLS server requests a certificate without rejecting the handshake, so a refusal is an HTTP status
    // (401) with a JSON-RPC body rather than a TLS alert the client cannot tell from a network failure.
    const sock = req.socket as { authorized?: boolean; getPeerCertificate?: () => { subject?: unknown } };
    if (sock.authorized === true) return 'ok';
    const peer = sock.getPeerCertificate?.();
    return peer && peer.subject ? 'wrong' : 'missing';
  };
  return {
    configured: expected.length > 0 || requireClientCert,
    check(req) {
      const c = cert(req);
      if (c !== 'ok') return c;
      return bearer(req);
    },
  };
}

/** The peer's address is on this machine (the /healthz exception, docs/transports.md). */
export const fromLoopback = (req: IncomingMessage): boolean => isLoopback(req.socket.remoteAddress);
