// Errors of the MCP bridge (spec §5.4 "MCP Compatibility"). One class, told apart by `code`, so the
// caller can map them: 'timeout'/'aborted' → the tool's own timeout handling (-32014), the rest →
// an execution failure. Messages are complete sentences meant for logs and operators.

export type McpErrorCode =
  /** mcp_source.uri is malformed, or uses the reserved mcp:// scheme (spec §5.4). */
  | 'config'
  /** A transport we do not implement (an unknown URI scheme). */
  | 'unsupported-transport'
  /** Streamable HTTP: the server could not be reached (DNS, refused, reset, no answer, HTTP 5xx). */
  | 'unreachable'
  /** Streamable HTTP: the server refused our credentials (HTTP 401/403). */
  | 'auth'
  /** Streamable HTTP: the sandbox's network rules (mode, allowlist, SSRF guard) refused the request. */
  | 'network-denied'
  /** Streamable HTTP: the server no longer knows our session (HTTP 404 to a request that carried one). */
  | 'session-expired'
  /** The server process could not be started. */
  | 'spawn'
  /** The server answered initialize with a protocol version we do not speak. */
  | 'version'
  /** The server broke the protocol (oversize frame, malformed response, bad result shape). */
  | 'protocol'
  /** The server process exited (stdio) or the connection broke (HTTP) while requests were pending. */
  | 'crashed'
  /** We stopped the server (another request on it timed out or was aborted, or it broke the protocol). */
  | 'stopped'
  /** A request exceeded its timeout; the server was stopped. */
  | 'timeout'
  /** The caller aborted the request (AbortSignal); the server was stopped if the request was in flight. */
  | 'aborted'
  /** The server answered with a JSON-RPC error. */
  | 'rpc'
  /** The server does not offer the named tool. */
  | 'tool-not-found'
  /** The client was closed. */
  | 'closed';

export class McpError extends Error {
  readonly code: McpErrorCode;
  /** JSON-RPC error code, for code 'rpc'. */
  readonly rpcCode?: number;
  readonly data?: unknown;
  constructor(code: McpErrorCode, message: string, extra?: { rpcCode?: number; data?: unknown }) {
    super(message);
    this.name = 'McpError';
    this.code = code;
    if (extra?.rpcCode !== undefined) this.rpcCode = extra.rpcCode;
    if (extra?.data !== undefined) this.data = extra.data;
  }
}
