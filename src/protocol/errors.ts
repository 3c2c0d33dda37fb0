// JSON-RPC 2.0 and CKP error codes: spec §9.4 (core) and runtime profile §4 (extended catalog).
// One table, so each code has exactly one meaning (profile §11 release checklist item 1).
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  ProtocolVersionNotSupported: -32001,
  SandboxDenied: -32010,
  PolicyDenied: -32011,
  ApprovalTimeout: -32012,
  ApprovalDenied: -32013,
  ToolTimeout: -32014,
  ProviderUnavailable: -32020,
  ProviderQuotaExceeded: -32021,
  MemoryBackendError: -32030,
  MemoryQueryFailed: -32031,
  PeerUnreachable: -32040,
  PeerTaskFailed: -32041,
  ChannelAuthFailed: -32050,
  ChannelRateLimited: -32051,
  ManifestInvalid: -32060,
  PrimitiveNotFound: -32061,
} as const;
export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode];

/** An error that goes on the wire. Handlers throw it; only the router turns it into a reply. */
export class ProtocolError extends Error {
  readonly code: number;
  readonly data: unknown;
  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = 'ProtocolError';
    this.code = code;
    this.data = data;
  }
  toJSON(): { code: number; message: string; data?: unknown } {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

/**
 * A local error: never serialized as is. `code` is a stable string, `cause` keeps the origin.
 * The router maps an unexpected one to -32603 with a generic message (no internals on the wire).
 */
export class ClawError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ClawError';
    this.code = code;
  }
}

/**
 * Codes that mean "refused, nothing was executed": the frame or envelope was bad, the method unknown, the params
 * invalid, the protocol version unsupported, or the agent not in a state to take the method (-32600 with
 * `data.state`: not initialized yet, stopping). Such an answer is never kept as a request_id's idempotency result
 * — a plain retry once the cause is gone must run (docs/protocol.md "Idempotency"). Any other code counts too when
 * its `data.executed` is `false`: a -32011 because the audit record could not be written (src/audit/refusal.ts).
 */
const NOT_EXECUTED: ReadonlySet<number> = new Set([
  ErrorCode.ParseError,
  ErrorCode.InvalidRequest,
  ErrorCode.MethodNotFound,
  ErrorCode.InvalidParams,
  ErrorCode.ProtocolVersionNotSupported,
]);

export function isNotExecuted(code: number, data?: unknown): boolean {
  return NOT_EXECUTED.has(code) || (typeof data === 'object' && data !== null && (data as { executed?: unknown }).executed === false);
}
