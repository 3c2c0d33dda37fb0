// The CKP endpoint (default /ckp; docs/transports.md, HTTP): POST carries one JSON-RPC message or a batch, with
// the stdio rules (size cap, UTF-8, the router answers -32700 / -32600); GET opens the SSE stream of agent
// notifications. The router is the only writer of replies: a POST becomes one frame, and the frame's reply is
// the HTTP response. A POST holding only notifications or responses is answered 202 with no body.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { InboundFrame } from '../../kernel/ports.ts';
import type { JsonRpcMessage } from '../../protocol/jsonrpc.ts';
import { classify } from '../../protocol/jsonrpc.ts';
import { ErrorCode } from '../../protocol/errors.ts';
import type { Logger } from '../../kernel/ports.ts';
import type { Route } from './server.ts';
import { readBody } from './body.ts';
import { refuse, sendJson, workingOn } from './reply.ts';
import { SESSION_HEADER, type SessionIds } from './session.ts';
import { EventBuffer, SseStream } from './sse.ts';

export interface CkpRouteDeps {
  maxBodyBytes: number;
  requestTimeoutMs: number;
  maxStreams: number;
  keepaliveMs: number;
  sessions: SessionIds;
  buffer: EventBuffer;
  streams: Set<SseStream>;
  /** The router's entry, once the transport started; undefined before start and after close. */
  deliver(): ((frame: InboundFrame) => void) | undefined;
  log: Logger;
}

const utf8 = /* @__PURE__ */ new TextDecoder('utf-8', { fatal: true });

export function ckpRoute(d: CkpRouteDeps): Route {
  return {
    auth: 'required',
    handle(req, res) {
      if (!d.sessions.accepts(req.headers[SESSION_HEADER])) {
        refuse(res, 404, ErrorCode.InvalidRequest, 'unknown or ended session: send claw.initialize to start one, or omit Claw-Session-Id', {
          headers: { connection: 'keep-alive' },
        });
        req.resume();
        return;
      }
      if (req.method === 'POST') post(d, req, res);
      else if (req.method === 'GET') stream(d, req, res);
      else {
        refuse(res, 405, ErrorCode.InvalidRequest, `method ${req.method} not allowed: POST a JSON-RPC message, GET the event stream`, { headers: { allow: 'GET, POST' } });
        req.resume();
      }
    },
  };
}

function post(d: CkpRouteDeps, req: IncomingMessage, res: ServerResponse): void {
  const type = req.headers['content-type'];
  if (typeof type !== 'string' || !/^application\/json\s*(;|$)/i.test(type)) {
    refuse(res, 415, ErrorCode.InvalidRequest, 'Content-Type must be application/json');
    req.resume();
    return;
  }
  const unavailable = () => refuse(res, 503, ErrorCode.InvalidRequest, 'not accepting requests (starting or shutting down)', { headers: { 'retry-after': '1' } });
  if (!d.deliver()) {
    unavailable();
    req.resume();
    return;
  }
  readBody(req, d.maxBodyBytes, d.requestTimeoutMs, (body) => {
    if ('aborted' in body) return;
    // Asked again: the transport may have closed while the body arrived (nothing is delivered after close()).
    const deliver = d.deliver();
    if (!deliver) {
      unavailable();
      return;
    }
    if ('timeout' in body) {
      // The body did not arrive within request_timeout_ms (a slow client): 408, then the connection goes.
      res.on('finish', () => req.socket.destroy());
      refuse(res, 408, ErrorCode.InvalidRequest, 'request body not received in time', { headers: { connection: 'close' } });
      return;
    }
    // An oversize body refused before its end: the rest is not read, so the connection cannot carry another request.
    const closeAfter = 'oversize' in body && !req.complete;
    if (closeAfter) res.on('finish', () => req.socket.destroy());
    let answered = false;
    const written = workingOn(res);
    let track: Map<string | number, 'claw.initialize' | 'claw.shutdown'> | undefined;
    const reply = (msg: JsonRpcMessage | JsonRpcMessage[]) => {
      if (answered) {
        d.log.debug('http reply after the response was sent, dropped');
        return;
      }
      answered = true;
      written();
      const headers: Record<string, string> = closeAfter ? { connection: 'close' } : {};
      if (track) sessionHeader(d.sessions, track, msg, headers);
      sendJson(res, statusOf(frame.payload, msg), msg, headers);
    };
    const frame: InboundFrame = { payload: { text: '' }, reply };
    if ('oversize' in body) frame.payload = { error: 'oversize', bytes: body.oversize, limit: d.maxBodyBytes };
    else {
      let text: string;
      try {
        text = utf8.decode(body.bytes);
      } catch {
        frame.payload = { error: 'encoding' };
        deliver(frame);
        return;
      }
      frame.payload = { text };
      // The router parses the text once and shows us the value before any of it runs: the session ids to
      // track, and whether it will answer at all. Text it refuses unparsed or cannot parse is answered.
      frame.parsed = (value) => {
        const shape = inspect(value);
        track = shape.track;
        // Only notifications and responses: the router will never answer (JSON-RPC 2.0 §4.1, §6).
        if (!shape.expectsReply && !answered) {
          answered = true;
          written();
          res.writeHead(202, { 'content-length': 0 });
          res.end();
        }
      };
    }
    deliver(frame);
  });
}

/**
 * Whether the router will answer this parsed frame, and the ids of claw.initialize / claw.shutdown requests in
 * it (the session id follows them). Invalid envelopes and requests are answered.
 */
function inspect(value: unknown): { expectsReply: boolean; track?: Map<string | number, 'claw.initialize' | 'claw.shutdown'> } {
  const items = Array.isArray(value) ? value : [value];
  if (items.length === 0) return { expectsReply: true };
  let expectsReply = false;
  let track: Map<string | number, 'claw.initialize' | 'claw.shutdown'> | undefined;
  for (const item of items) {
    const c = classify(item);
    if (c.type === 'invalid') expectsReply = true;
    else if (c.type === 'request') {
      expectsReply = true;
      const m = c.msg.method;
      if ((m === 'claw.initialize' || m === 'claw.shutdown') && c.msg.id !== null) (track ??= new Map()).set(c.msg.id, m);
    }
  }
  return { expectsReply, track };
}

function sessionHeader(sessions: SessionIds, track: Map<string | number, string>, msg: JsonRpcMessage | JsonRpcMessage[], headers: Record<string, string>): void {
  for (const r of Array.isArray(msg) ? msg : [msg]) {
    if (!('id' in r) || r.id === null || !('result' in r)) continue;
    const method = track.get(r.id);
    if (method === 'claw.initialize') headers['claw-session-id'] = sessions.started();
    else if (method === 'claw.shutdown') sessions.ended();
  }
}

/** 400 for a body that is not JSON-RPC at all (-32700, or -32600 with id null), 413 oversize, else 200. */
function statusOf(payload: InboundFrame['payload'], msg: JsonRpcMessage | JsonRpcMessage[]): number {
  if ('error' in payload) return payload.error === 'oversize' ? 413 : 400;
  if (Array.isArray(msg) || !('error' in msg) || msg.id !== null) return 200;
  return msg.error.code === ErrorCode.ParseError || msg.error.code === ErrorCode.InvalidRequest ? 400 : 200;
}

function stream(d: CkpRouteDeps, req: IncomingMessage, res: ServerResponse): void {
  req.resume();
  const accept = req.headers.accept;
  if (accept !== undefined && !/text\/event-stream|\*\/\*/i.test(accept)) {
    refuse(res, 406, ErrorCode.InvalidRequest, 'GET opens an event stream: Accept must allow text/event-stream');
    return;
  }
  if (!d.deliver()) {
    refuse(res, 503, ErrorCode.InvalidRequest, 'not accepting streams (starting or shutting down)', { headers: { 'retry-after': '1' } });
    return;
  }
  if (d.streams.size >= d.maxStreams) {
    refuse(res, 503, ErrorCode.InvalidRequest, 'too many open event streams', { headers: { 'retry-after': '5' } });
    return;
  }
  const last = req.headers['last-event-id'];
  const s = new SseStream(res, { keepaliveMs: d.keepaliveMs, maxBufferedBytes: 1024 * 1024, onEnd: (x) => d.streams.delete(x) });
  d.streams.add(s);
  s.open(d.buffer.since(typeof last === 'string' ? last : undefined));
}
