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
