// A kernel Transport as a bus inbox: each inbound frame is one peer message, handed to the bus
// handler, answered through the frame. Not the router: peer messages never reach the operator's
// method table (a peer cannot call claw.tool.call or claw.shutdown on us; docs/swarm.md).
import type { InboundFrame, Logger, Transport } from '../kernel/ports.ts';
import { ErrorCode, ProtocolError } from '../protocol/errors.ts';
import { classify, failure, invalidRequest, success } from '../protocol/jsonrpc.ts';
import { BusError, type BusHandler, type PeerBus } from './bus.ts';
import type { JsonRpcMessage } from '../protocol/jsonrpc.ts';

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

/** How a bus reaches one peer: any JSON-RPC carrier (the fs transport's client, an MQTT link). */
export interface PeerCarrier {
  request(to: string, msg: JsonRpcMessage, o: { timeoutMs?: number }): Promise<unknown>;
  notify(to: string, msg: JsonRpcMessage): Promise<unknown>;
}

/**
 * A bus's outbound side over a carrier: the peer's ProtocolError passes through (it answered), any other
 * failure means it did not answer and becomes BusError('unreachable') (-32040 at the swarm layer).
 */
export function peerCalls(carrier: PeerCarrier, reachable: (to: string) => void): Pick<PeerBus, 'request' | 'notify'> {
  return {
    async request(to, method, params, timeoutMs) {
      reachable(to);
      let reply: unknown;
      try {
        reply = await carrier.request(to, { jsonrpc: '2.0', id: 1, method, params: params as Record<string, unknown> }, { timeoutMs });
      } catch (e) {
        if (e instanceof ProtocolError) throw e;
        throw new BusError('unreachable', `peer ${to} did not answer: ${(e as Error).message}`, { cause: e });
      }
      return resultOf(reply);
    },
    async notify(to, method, params) {
      reachable(to);
      try {
        await carrier.notify(to, { jsonrpc: '2.0', method, params: params as Record<string, unknown> });
      } catch (e) {
        throw new BusError('unreachable', `peer ${to}: ${(e as Error).message}`, { cause: e });
      }
    },
  };
}
