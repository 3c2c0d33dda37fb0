// What both A2A bindings check before an operation runs (docs/a2a.md "Methods", "HTTP+JSON"): the JSON media type
// and the body under the listener's size cap and request timeout (transports/http/body.ts). Each binding answers a
// refusal in its own error shape through `fail`.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody } from '../transports/http/body.ts';
import { DEFAULT_MAX_DEPTH, textNestsDeeperThan } from '../protocol/depth.ts';
import { A2aError, A2aErrorCode } from './errors.ts';

export interface BodyLimits {
  maxBodyBytes: number;
  requestTimeoutMs: number;
}

export type Fail = (status: number, err: A2aError, headers?: Record<string, string>) => void;

/** `application/json`, or A2A's `application/a2a+json`, with parameters. */
export const isJsonType = (type: unknown): boolean => typeof type === 'string' && /^application\/(json|a2a\+json)\s*(;|$)/i.test(type);

export function receiveJson(req: IncomingMessage, res: ServerResponse, d: BodyLimits, fail: Fail, ok: (text: string) => void): void {
  if (!isJsonType(req.headers['content-type'])) {
    req.resume();
    fail(415, new A2aError(A2aErrorCode.ContentTypeNotSupported, 'Content-Type must be application/json'));
    return;
  }
  readBody(req, d.maxBodyBytes, d.requestTimeoutMs, (body) => {
    if ('aborted' in body) return;
    if ('timeout' in body || 'oversize' in body) {
      // The rest of the body is not read: the connection cannot carry another request.
      res.on('finish', () => req.socket.destroy());
      const why = 'timeout' in body ? 'request body not received in time' : `request body over ${d.maxBodyBytes} bytes`;
      fail('timeout' in body ? 408 : 413, new A2aError(A2aErrorCode.InvalidRequest, why), { connection: 'close' });
      return;
    }
    const text = Buffer.from(body.bytes).toString('utf8');
    // Before JSON.parse, whose time grows with the nesting: a body of brackets must not hold the event loop.
    if (textNestsDeeperThan(text, DEFAULT_MAX_DEPTH)) return fail(400, new A2aError(A2aErrorCode.InvalidRequest, `the body nests deeper than ${DEFAULT_MAX_DEPTH} levels`));
    ok(text);
  });
}
