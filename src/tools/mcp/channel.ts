// The seam between the MCP client core (client.ts: JSON-RPC ids, handshake, tools, timeouts) and a
// transport (MCP spec "Transports"): stdio (stdio-channel.ts, a child process) or Streamable HTTP
// (http-channel.ts). A transport opens channels; one channel carries one session (one server
// process, or one Mcp-Session-Id) and is dead for good once closed.
import type { McpError } from './errors.ts';

/** What a channel tells the core. */
export interface McpChannelHooks {
  /** A parsed inbound JSON value: one JSON-RPC message or a batch (array). */
  onMessage(msg: unknown): void;
  /** The exchange carrying request `id` failed (HTTP: one POST); only that request fails. */
  onRequestFailed(id: number, err: McpError): void;
  /** The session is gone (process exited, protocol broken, server forgot the session): fail all pending. */
  onClosed(errFor: (what: string | undefined) => McpError): void;
  /** Whether request `id` still waits for its response (HTTP: decides whether an ended SSE stream is resumed). */
  isPending(id: number): boolean;
}

export interface McpChannel {
  /** For diagnostics and tests: the server's pid (stdio). */
  readonly pid?: number;
  /**
   * true (stdio): an abandoned request can only be stopped by stopping the whole server, since the
   * runtime requires that no work of a timed-out tool survives. false (HTTP): the request alone is
   * cancelled (notifications/cancelled + its HTTP exchange aborted), the session goes on.
   */
  readonly stopOnCancel: boolean;
  /** Deliver one outbound JSON-RPC message (or a batch of responses). Never throws. */
  send(msg: unknown): void;
  /** Stop waiting for request `id`'s exchange (HTTP: abort its POST / SSE stream). */
  abandon(id: number): void;
  /** The protocol version initialize settled on (HTTP sends it as MCP-Protocol-Version). */
  negotiated(version: string): void;
  /** "; server stderr: …" or '' — appended to error messages about this server. */
  note(): string;
  /** Stop now (stdio: kill the process group). Resolves when nothing of the session runs any more. */
  kill(): Promise<void>;
  /** Orderly shutdown (stdio: close stdin, wait, kill; HTTP: DELETE the session), bounded by graceMs. */
  close(graceMs: number): Promise<void>;
}

export interface McpTransport {
  /** Open a new session's channel; rejects with an McpError when that is impossible (spawn, config). */
  open(hooks: McpChannelHooks): Promise<McpChannel>;
}
