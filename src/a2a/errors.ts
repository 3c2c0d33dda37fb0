// A2A's JSON-RPC error codes (A2A 1.0 §5.4 / 0.3 §8.2): used on the A2A endpoint only. They overlap CKP's
// extended catalog (-32001 is CKP's protocol-version error), which is why the A2A endpoint has its own table and
// claw.task.* answers with CKP codes instead (task-methods.ts).
import { ClawError } from '../protocol/errors.ts';

export const A2aErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  TaskNotFound: -32001,
  TaskNotCancelable: -32002,
  PushNotificationNotSupported: -32003,
  UnsupportedOperation: -32004,
  ContentTypeNotSupported: -32005,
  VersionNotSupported: -32009,
} as const;

export class A2aError extends Error {
  /** A refusal's HTTP status and headers, the same on both bindings (429, 401); else each binding maps the code. */
  status?: number;
  headers?: Record<string, string>;
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'A2aError';
  }
}

/** Refused for the caller's rate or open streams: HTTP 429 with Retry-After on either binding (JSON-RPC -32603). */
export class TooManyRequests extends A2aError {
  constructor(
    message: string,
    readonly retryAfterS: number,
  ) {
    super(A2aErrorCode.InternalError, message);
    this.status = 429;
    this.headers = { 'retry-after': String(retryAfterS) };
  }
}

/** Authenticated, yet the credential names no caller (access.ts callerOf): HTTP 401 on either binding. */
export class NoCaller extends A2aError {
  constructor() {
    super(A2aErrorCode.InvalidRequest, 'authentication failed: the credential names no caller');
    this.status = 401;
    this.headers = { 'www-authenticate': 'Bearer realm="claw"' };
  }
}

/** A task service error → its A2A error. */
export function a2aErrorOf(e: unknown): A2aError {
  if (e instanceof A2aError) return e;
  if (e instanceof ClawError) {
    const code =
      e.code === 'task.not_found'
        ? A2aErrorCode.TaskNotFound
        : e.code === 'task.not_cancelable'
          ? A2aErrorCode.TaskNotCancelable
          : e.code === 'task.unsupported'
            ? A2aErrorCode.UnsupportedOperation
            : e.code === 'task.bad_page_token' || e.code === 'task.invalid_input'
              ? A2aErrorCode.InvalidParams
              : A2aErrorCode.InternalError;
    return new A2aError(code, e.message);
  }
  return new A2aError(A2aErrorCode.InternalError, 'Internal error');
}
