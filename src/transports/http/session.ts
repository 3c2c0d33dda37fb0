// How a CKP session maps to HTTP (docs/transports.md, HTTP "Sessions"). The CKP lifecycle belongs to the runtime,
// not to a connection (one claw.initialize, from any transport, starts the session every transport talks to), so
// the HTTP session id names that session as HTTP clients see it: minted when a claw.initialize sent over HTTP is
// answered with a result, returned in the `Claw-Session-Id` response header, retired when a claw.shutdown sent
// over HTTP succeeds or a later claw.initialize replaces it. A request carrying an id that is not the current one
// is answered 404 (as MCP's Streamable HTTP does), so its client learns that the session it started has ended.
// Requests without the header are accepted: operators attach to a running agent (`claw send`, curl, probes).
import { nodeCrypto } from '../../node/lazy.ts';

export const SESSION_HEADER = 'claw-session-id';

export class SessionIds {
  private current: string | undefined;

  /** The header value is acceptable: absent, or the current session's id. */
  accepts(header: string | string[] | undefined): boolean {
    if (header === undefined) return true;
    return typeof header === 'string' && this.current !== undefined && header === this.current;
  }

  /** A claw.initialize over HTTP succeeded: a new session id (128 random bits). */
  started(): string {
    this.current = nodeCrypto().randomBytes(16).toString('hex');
    return this.current;
  }

  /** A claw.shutdown over HTTP succeeded: the session's id is no longer accepted. */
  ended(): void {
    this.current = undefined;
  }

  get id(): string | undefined {
    return this.current;
  }
}
