// Why talking to a remote A2A agent failed, as one typed error. Messages name the peer's URL and the
// step, never a credential (the bearer token is only ever a header value).
import { ClawError } from '../../protocol/errors.ts';

export type A2aClientFailure =
  /** The agent card could not be read or has no usable shape. */
  | 'card'
  /** The card names no JSON-RPC interface of a version this client speaks (1.0, 0.3). */
  | 'no-interface'
  /** The peer answered HTTP 401/403. */
  | 'auth'
  /** The peer answered something that is not an A2A JSON-RPC reply. */
  | 'protocol'
  /** The peer answered a JSON-RPC error (`rpcCode` holds its code). */
  | 'rpc'
  /** The task's result passed a cap (`limit` names it); the task was canceled and the stream closed. */
  | 'limit'
  | 'timeout'
  | 'aborted';

/** The caps on what one task's result may hold (docs/a2a.md "Client"). */
export type A2aResultCap = 'max_result_bytes' | 'max_artifacts';

export class A2aClientError extends ClawError {
  readonly reason: A2aClientFailure;
  readonly rpcCode?: number;
  readonly limit?: A2aResultCap;
  constructor(reason: A2aClientFailure, message: string, o: { rpcCode?: number; limit?: A2aResultCap; cause?: unknown } = {}) {
    super('a2a-client', message, { cause: o.cause });
    this.name = 'A2aClientError';
    this.reason = reason;
    if (o.rpcCode !== undefined) this.rpcCode = o.rpcCode;
    if (o.limit !== undefined) this.limit = o.limit;
  }
}
