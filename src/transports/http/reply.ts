// HTTP responses the transport writes itself: refusals before a frame exists (auth, rate, method, session) and
// the router's replies. A refusal is a proper status plus a JSON-RPC error body (id null: no request was read).
import type { ServerResponse } from 'node:http';

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

export function refuse(res: ServerResponse, status: number, code: number, message: string, opts: { data?: unknown; headers?: Record<string, string> } = {}): void {
  const error = opts.data === undefined ? { code, message } : { code, message, data: opts.data };
  sendJson(res, status, { jsonrpc: '2.0', id: null, error }, opts.headers);
}

/**
 * While a route works on its answer (an agent turn, a slow tool call), the silence on the socket is the server's,
 * not a slow client's: the idle cut-off of server.ts (request_timeout_ms) is off until the answer is written, else
 * any call longer than it loses its reply. Returns what turns it back on (call it before writing).
 */
export function workingOn(res: ServerResponse): () => void {
  const sock = res.socket;
  const ms = sock?.timeout;
  if (!sock || !ms) return () => {};
  sock.setTimeout(0);
  return () => void (sock.destroyed || sock.setTimeout(ms));
}
