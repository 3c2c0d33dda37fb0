// One provider's failure, classified so the client knows whether to retry (runtime profile §5:
// connect errors, timeouts, 429 and 5xx are retryable; other 4xx are not) and whether it was a
// quota refusal (-32021) or unavailability (-32020) when the whole chain has failed.
// Messages name the provider, HTTP status and the API's error type only: never a response body
// (it may echo a key, and spec §5.11 keeps bodies out of telemetry) and never a secret value.
import { ClawError } from '../protocol/errors.ts';

export type FailureReason =
  | 'connect' // fetch could not reach the endpoint
  | 'timeout' // no response (or no stream progress) within the attempt timeout
  | 'http' // non-2xx status
  | 'malformed' // body is not the JSON / SSE shape the API documents
  | 'truncated' // the stream ended before its end marker
  | 'api-error' // the API reported an error inside a 200 response or a stream
  | 'secret' // secret_ref could not be resolved
  | 'quota' // tokens_per_day, tokens_per_request, requests_per_minute 0, max_context_window
  | 'config'; // the provider cannot be used as declared (e.g. custom endpoint not a rules file)

export class ProviderFailure extends ClawError {
  readonly reason: FailureReason;
  readonly retryable: boolean;
  readonly status?: number;
  /** Server-requested wait (Retry-After / retry-after-ms), ms. */
  readonly retryAfterMs?: number;
  /** Extra structured context for the error's data (limit name, numbers); no secrets, no bodies. */
  readonly detail?: Record<string, unknown>;
  constructor(
    reason: FailureReason,
    message: string,
    o: { retryable?: boolean; status?: number; retryAfterMs?: number; detail?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(`provider-${reason}`, message, { cause: o.cause });
    this.name = 'ProviderFailure';
    this.reason = reason;
    this.retryable = o.retryable ?? false;
    this.status = o.status;
    this.retryAfterMs = o.retryAfterMs;
    this.detail = o.detail;
  }
}

export const malformed = (what: string, cause?: unknown) =>
  new ProviderFailure('malformed', `malformed response: ${what}`, { cause });
