// A kernel Transport as a bus inbox: each inbound frame is one peer message, handed to the bus
// handler, answered through the frame. Not the router: peer messages never reach the operator's
// method table (a peer cannot call claw.tool.call or claw.shutdown on us; docs/swarm.md).
import type { InboundFrame, Logger, Transport } from '../kernel/ports.ts';
import { ErrorCode, ProtocolError } from '../protocol/errors.ts';
import { classify, failure, invalidRequest, success } from '../protocol/jsonrpc.ts';
import type { BusHandler } from './bus.ts';

export function serveBus(t: Transport, handler: BusHandler, log: Logger): void {
  t.start((frame: InboundFrame) => {
    if (!('text' in frame.payload)) {
      frame.reply(failure(null, invalidRequest('frame too large or not UTF-8')));
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(frame.payload.text);
    } catch {
      frame.reply(failure(null, new ProtocolError(ErrorCode.ParseError, 'Parse error')));
      return;
    }
    const c = classify(value);
    if (c.type === 'invalid') return frame.reply(failure(c.id, invalidRequest(c.reason)));
    if (c.type === 'response') return; // we never send requests on this inbox's transport
    const id = c.type === 'request' ? c.msg.id : undefined;
    handler({ method: c.msg.method, params: c.msg.params }).then(
      (r) => {
        if (c.type === 'request') frame.reply(success(id!, r));
      },
      (e) => {
        const err = e instanceof ProtocolError ? e : new ProtocolError(ErrorCode.InternalError, 'Internal error');
        if (!(e instanceof ProtocolError)) log.error('swarm bus handler failed', { method: c.msg.method, error: String(e) });
        if (c.type === 'request') frame.reply(failure(id!, err));
      },
    );
  });
}

/** A JSON-RPC response from a peer → its result, or the ProtocolError it carries. */
export function resultOf(reply: unknown): unknown {
  const r = reply as { result?: unknown; error?: { code: number; message: string; data?: unknown } };
  if (r && typeof r === 'object' && r.error) throw new ProtocolError(r.error.code, r.error.message, r.error.data);
  return r?.result;
}
