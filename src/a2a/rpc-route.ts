// The A2A JSON-RPC binding (docs/a2a.md "Methods"): POST on the A2A path, one JSON-RPC request per body. The
// A2A-Version header picks the dialect: `1.0` speaks SendMessage / GetTask / ListTasks / CancelTask /
// SendStreamingMessage / SubscribeToTask with 1.0 JSON; absent or empty means 0.3 (A2A 1.0 §3.6: a request without
// the header is 0.3) with message/send, message/stream, tasks/get, tasks/cancel, tasks/resubscribe. A streaming
// method answers `text/event-stream`, each event a JSON-RPC response with the request's id (1.0 §9.4.2). Only
// these names exist here: an A2A caller never reaches a claw.* method.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from '../transports/http/reply.ts';
import type { Route, RouteContext } from '../transports/http/server.ts';
import { A2aError, A2aErrorCode, a2aErrorOf } from './errors.ts';
import { callerOf } from './access.ts';
import { receiveJson, type BodyLimits } from './http-body.ts';
import { RPC_METHODS, runOperation, STREAMED } from './operations.ts';
import { StreamSlots } from './stream.ts';
import type { TaskService } from './tasks.ts';
import type { WireVersion } from './wire.ts';

export interface RpcRouteDeps extends BodyLimits {
  tasks: () => TaskService | undefined;
  /** Open streams per client: one set per listener, shared with the REST route. */
  slots?: StreamSlots;
}

const PUSH = /[Pp]ushNotificationConfig/;

/** The version a request asked for, or the A2A error for one this runtime does not speak. */
export function versionOf(header: string | string[] | undefined): WireVersion {
  const h = (Array.isArray(header) ? header[0] : header)?.trim() ?? '';
  if (h === '' || h === '0.3' || h === '0.3.0') return '0.3';
  if (h === '1.0' || h === '1' || h === '1.0.0') return '1.0';
  throw new A2aError(A2aErrorCode.VersionNotSupported, `A2A version ${h} is not supported (supported: 1.0, 0.3)`);
}

const rpcError = (res: ServerResponse, status: number, id: string | number | null, e: A2aError, headers: Record<string, string> = {}) =>
  sendJson(res, status, { jsonrpc: '2.0', id, error: { code: e.code, message: e.message } }, headers);

export function a2aRpcRoute(d: RpcRouteDeps): Route {
  const slots = d.slots ?? new StreamSlots();
  return {
    auth: 'required',
    admitsCallers: true,
    handle(req, res, ctx) {
      if (req.method !== 'POST') {
        req.resume();
        rpcError(res, 405, null, new A2aError(A2aErrorCode.InvalidRequest, 'POST a JSON-RPC request'), { allow: 'POST' });
        return;
      }
      receiveJson(req, res, d, (status, e, headers) => rpcError(res, status, null, e, headers), (text) => void answer(d.tasks(), slots, ctx, req, res, text));
    },
  };
}

async function answer(tasks: TaskService | undefined, slots: StreamSlots, ctx: RouteContext, req: IncomingMessage, res: ServerResponse, text: string): Promise<void> {
  let id: string | number | null = null;
  try {
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      throw new A2aError(A2aErrorCode.ParseError, 'Parse error');
    }
    if (!msg || typeof msg !== 'object' || Array.isArray(msg)) throw new A2aError(A2aErrorCode.InvalidRequest, 'one JSON-RPC request object per POST');
    const m = msg as Record<string, unknown>;
    if (typeof m.id === 'string' || (typeof m.id === 'number' && Number.isFinite(m.id))) id = m.id;
    if (m.jsonrpc !== '2.0' || typeof m.method !== 'string' || !('id' in m) || (m.id !== null && id === null)) throw new A2aError(A2aErrorCode.InvalidRequest, 'Invalid Request: a JSON-RPC 2.0 request with an id');
    const version = versionOf(req.headers['a2a-version']);
    const op = Object.hasOwn(RPC_METHODS[version], m.method) ? RPC_METHODS[version][m.method] : undefined;
    if (!op) {
      if (PUSH.test(m.method)) throw new A2aError(A2aErrorCode.PushNotificationNotSupported, 'push notifications are not supported by this agent');
      throw new A2aError(A2aErrorCode.MethodNotFound, `Method not found: ${m.method} (A2A ${version})`);
    }
    const reqId = id;
    const result = await runOperation(op, m.params === undefined ? {} : m.params, tasks, version, { res, caller: callerOf(ctx), slots, frame: (result) => ({ jsonrpc: '2.0', id: reqId, result }) });
    if (result !== STREAMED) sendJson(res, 200, { jsonrpc: '2.0', id, result });
  } catch (e) {
    const err = a2aErrorOf(e);
    rpcError(res, err.status ?? (err.code === A2aErrorCode.ParseError || err.code === A2aErrorCode.InvalidRequest ? 400 : 200), id, err, err.headers);
  }
}
