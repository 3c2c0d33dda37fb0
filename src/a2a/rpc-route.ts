// The A2A JSON-RPC binding (docs/a2a.md "Methods"): POST on the A2A path, one JSON-RPC request per body. The
// A2A-Version header picks the dialect: `1.0` speaks SendMessage / GetTask / ListTasks / CancelTask with 1.0
// JSON; absent or empty means 0.3 (A2A 1.0 §3.6: a request without the header is 0.3) with message/send,
// tasks/get, tasks/cancel. Only these names exist here: an A2A caller never reaches a claw.* method.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { illFormedPath } from '../protocol/well-formed.ts';
import { readBody } from '../transports/http/body.ts';
import { sendJson } from '../transports/http/reply.ts';
import type { Route } from '../transports/http/server.ts';
import { A2aError, A2aErrorCode, a2aErrorOf } from './errors.ts';
import type { TaskService } from './tasks.ts';
import { parseMessage, parseState, wireTask, type WireVersion } from './wire.ts';

export interface RpcRouteDeps {
  tasks: () => TaskService | undefined;
  maxBodyBytes: number;
  requestTimeoutMs: number;
}

type Handler = (params: Record<string, unknown>, tasks: TaskService, v: WireVersion) => Promise<unknown> | unknown;

const STREAMING = new Set(['SendStreamingMessage', 'SubscribeToTask', 'message/stream', 'tasks/resubscribe']);
const PUSH = /PushNotificationConfig|pushNotificationConfig/;

/** The version a request asked for, or the A2A error for one this runtime does not speak. */
export function versionOf(header: string | string[] | undefined): WireVersion {
  const h = (Array.isArray(header) ? header[0] : header)?.trim() ?? '';
  if (h === '' || h === '0.3' || h === '0.3.0') return '0.3';
  if (h === '1.0' || h === '1' || h === '1.0.0') return '1.0';
  throw new A2aError(A2aErrorCode.VersionNotSupported, `A2A version ${h} is not supported (supported: 1.0, 0.3)`);
}

const optInt = (x: unknown, name: string): number | undefined => {
  if (x === undefined || x === null) return undefined;
  if (typeof x !== 'number' || !Number.isInteger(x) || x < 0) throw new A2aError(A2aErrorCode.InvalidParams, `${name} must be a non-negative integer`);
  return x;
};
const reqId = (p: Record<string, unknown>): string => {
  if (typeof p.id !== 'string' || p.id === '') throw new A2aError(A2aErrorCode.InvalidParams, 'id (the task id) is required');
  return p.id;
};

const send: Handler = async (p, tasks, v) => {
  const message = parseMessage(p.message);
  if (typeof message === 'string') throw new A2aError(A2aErrorCode.InvalidParams, message);
  const c = (p.configuration ?? {}) as Record<string, unknown>;
  // 1.0: returnImmediately (default false); 0.3: blocking (this runtime waits unless it is false).
  const wait = v === '1.0' ? c.returnImmediately !== true : c.blocking !== false;
  const historyLength = optInt(c.historyLength, 'configuration.historyLength');
  const t = await tasks.create(message, { wait });
  const task = wireTask(t, v, { historyLength });
  return v === '1.0' ? { task } : task;
};

const get: Handler = (p, tasks, v) => wireTask(tasks.get(reqId(p)), v, { historyLength: optInt(p.historyLength, 'historyLength') });

const cancel: Handler = (p, tasks, v) => wireTask(tasks.cancel(reqId(p)), v);

const list: Handler = (p, tasks, v) => {
  let state;
  if (p.status !== undefined && p.status !== 'TASK_STATE_UNSPECIFIED') {
    state = parseState(p.status);
    if (!state) throw new A2aError(A2aErrorCode.InvalidParams, `unknown status ${String(p.status)}`);
  }
  if (p.contextId !== undefined && typeof p.contextId !== 'string') throw new A2aError(A2aErrorCode.InvalidParams, 'contextId must be a string');
  if (p.pageToken !== undefined && typeof p.pageToken !== 'string') throw new A2aError(A2aErrorCode.InvalidParams, 'pageToken must be a string');
  const page = tasks.list({ contextId: (p.contextId as string) || undefined, state, pageSize: optInt(p.pageSize, 'pageSize') || undefined, pageToken: (p.pageToken as string) || undefined });
  const historyLength = optInt(p.historyLength, 'historyLength') ?? 0;
  return {
    tasks: page.tasks.map((t) => wireTask(t, v, { historyLength, artifacts: p.includeArtifacts === true })),
    nextPageToken: page.nextPageToken,
    pageSize: page.tasks.length,
    totalSize: page.totalSize,
  };
};

/** Method tables per dialect. 0.3 has no tasks/list on JSON-RPC. */
const METHODS: Record<WireVersion, Record<string, Handler>> = {
  '1.0': { SendMessage: send, GetTask: get, ListTasks: list, CancelTask: cancel },
  '0.3': { 'message/send': send, 'tasks/get': get, 'tasks/cancel': cancel },
};

export function a2aRpcRoute(d: RpcRouteDeps): Route {
  return {
    auth: 'required',
    handle(req, res) {
      if (req.method !== 'POST') {
        req.resume();
        sendJson(res, 405, { jsonrpc: '2.0', id: null, error: { code: A2aErrorCode.InvalidRequest, message: 'POST a JSON-RPC request' } }, { allow: 'POST' });
        return;
      }
      const type = req.headers['content-type'];
      if (typeof type !== 'string' || !/^application\/(json|a2a\+json)\s*(;|$)/i.test(type)) {
        req.resume();
        sendJson(res, 415, { jsonrpc: '2.0', id: null, error: { code: A2aErrorCode.ContentTypeNotSupported, message: 'Content-Type must be application/json' } });
        return;
      }
      readBody(req, d.maxBodyBytes, d.requestTimeoutMs, (body) => {
        if ('aborted' in body) return;
        if ('timeout' in body || 'oversize' in body) {
          const why = 'timeout' in body ? 'request body not received in time' : `request body over ${d.maxBodyBytes} bytes`;
          res.on('finish', () => req.socket.destroy());
          sendJson(res, 'timeout' in body ? 408 : 413, { jsonrpc: '2.0', id: null, error: { code: A2aErrorCode.InvalidRequest, message: why } }, { connection: 'close' });
          return;
        }
        void answer(d, req, res, Buffer.from(body.bytes).toString('utf8'));
      });
    },
  };
}

async function answer(d: RpcRouteDeps, req: IncomingMessage, res: ServerResponse, text: string): Promise<void> {
  let id: string | number | null = null;
  let version: WireVersion = '0.3';
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
    if (m.jsonrpc !== '2.0' || typeof m.method !== 'string' || !('id' in m)) throw new A2aError(A2aErrorCode.InvalidRequest, 'Invalid Request: a JSON-RPC 2.0 request with an id');
    version = versionOf(req.headers['a2a-version']);
    const handler = Object.hasOwn(METHODS[version], m.method) ? METHODS[version][m.method] : undefined;
    if (!handler) {
      if (STREAMING.has(m.method)) throw new A2aError(A2aErrorCode.UnsupportedOperation, `${m.method}: streaming is not supported by this agent (capabilities.streaming is false)`);
      if (PUSH.test(m.method)) throw new A2aError(A2aErrorCode.PushNotificationNotSupported, 'push notifications are not supported by this agent');
      throw new A2aError(A2aErrorCode.MethodNotFound, `Method not found: ${m.method} (A2A ${version})`);
    }
    const params = m.params === undefined ? {} : m.params;
    if (!params || typeof params !== 'object' || Array.isArray(params)) throw new A2aError(A2aErrorCode.InvalidParams, 'params must be an object');
    // A lone surrogate cannot be stored or sent on as UTF-8 (protocol/well-formed.ts): refused, as on the CKP wire.
    const bad = illFormedPath(params, 'params');
    if (bad !== undefined) throw new A2aError(A2aErrorCode.InvalidParams, `${bad}: a string holds a lone UTF-16 surrogate (not well-formed Unicode)`);
    const tasks = d.tasks();
    if (!tasks) throw new A2aError(A2aErrorCode.InternalError, 'the agent is not running (no session started)');
    const result = await handler(params as Record<string, unknown>, tasks, version);
    sendJson(res, 200, { jsonrpc: '2.0', id, result });
  } catch (e) {
    const err = a2aErrorOf(e);
    const status = err.code === A2aErrorCode.ParseError || err.code === A2aErrorCode.InvalidRequest ? 400 : 200;
    sendJson(res, status, { jsonrpc: '2.0', id, error: { code: err.code, message: err.message } });
  }
}
