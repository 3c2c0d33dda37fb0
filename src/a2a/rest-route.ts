// The A2A HTTP+JSON binding, 1.0 (A2A 1.0 §11; docs/a2a.md "HTTP+JSON"): the same operations as the JSON-RPC
// route (operations.ts) under the A2A path, named by method and path instead of a JSON-RPC method:
//   POST {path}/message:send, POST {path}/message:stream, GET {path}/tasks/{id}, GET {path}/tasks,
//   POST {path}/tasks/{id}:cancel, GET|POST {path}/tasks/{id}:subscribe.
// Same listener gates (auth, rate limit, connection cap: server.ts) and the same body cap (http-body.ts).
// Errors are AIP-193 bodies with a google.rpc.ErrorInfo naming the A2A error, at the HTTP status of §5.4.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from '../transports/http/reply.ts';
import type { Route, RouteContext } from '../transports/http/server.ts';
import { A2aError, A2aErrorCode, a2aErrorOf } from './errors.ts';
import { callerOf } from './access.ts';
import { isJsonType, receiveJson } from './http-body.ts';
import { runOperation, STREAMED, type Operation } from './operations.ts';
import type { RpcRouteDeps } from './rpc-route.ts';
import { StreamSlots } from './stream.ts';

/** A2A code → HTTP status, google.rpc status name, ErrorInfo reason (A2A 1.0 §5.4, §11.6). */
const ERRORS: Record<number, [number, string, string?]> = {
  [A2aErrorCode.TaskNotFound]: [404, 'NOT_FOUND', 'TASK_NOT_FOUND'],
  [A2aErrorCode.TaskNotCancelable]: [409, 'FAILED_PRECONDITION', 'TASK_NOT_CANCELABLE'],
  [A2aErrorCode.PushNotificationNotSupported]: [400, 'UNIMPLEMENTED', 'PUSH_NOTIFICATION_NOT_SUPPORTED'],
  [A2aErrorCode.UnsupportedOperation]: [400, 'UNIMPLEMENTED', 'UNSUPPORTED_OPERATION'],
  [A2aErrorCode.ContentTypeNotSupported]: [415, 'INVALID_ARGUMENT', 'CONTENT_TYPE_NOT_SUPPORTED'],
  [A2aErrorCode.VersionNotSupported]: [400, 'UNIMPLEMENTED', 'VERSION_NOT_SUPPORTED'],
  [A2aErrorCode.InvalidParams]: [400, 'INVALID_ARGUMENT', 'INVALID_PARAMS'],
  [A2aErrorCode.InvalidRequest]: [400, 'INVALID_ARGUMENT'],
  [A2aErrorCode.ParseError]: [400, 'INVALID_ARGUMENT'],
  [A2aErrorCode.MethodNotFound]: [404, 'NOT_FOUND'],
};
const STATUS_NAMES: Record<number, string> = { 401: 'UNAUTHENTICATED', 408: 'DEADLINE_EXCEEDED', 413: 'INVALID_ARGUMENT', 429: 'RESOURCE_EXHAUSTED' };

function restError(res: ServerResponse, e: A2aError, status?: number, headers: Record<string, string> = {}): void {
  const [http, name, reason] = ERRORS[e.code] ?? [500, 'INTERNAL'];
  const code = status ?? http;
  const details = reason ? [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'a2a-protocol.org' }] : [];
  sendJson(res, code, { error: { code, status: STATUS_NAMES[code] ?? name, message: e.message, details } }, headers);
}

/** The path exists, the HTTP method is not one it takes: 405 with Allow. */
class NotAllowed extends A2aError {
  constructor(readonly allow: string) {
    super(A2aErrorCode.MethodNotFound, `this path takes ${allow}`);
  }
}

interface Match {
  op: Operation;
  id?: string;
  /** The operation takes a JSON body (SendMessage); others read their params from the path and query. */
  body?: boolean;
}

/** Method and path (after the A2A path) → the operation, or the error saying why nothing matched. */
function match(method: string, sub: string): Match | A2aError {
  if (sub === '/message:send' || sub === '/message:stream') {
    if (method !== 'POST') return new NotAllowed('POST');
    return { op: sub === '/message:send' ? 'SendMessage' : 'SendStreamingMessage', body: true };
  }
  if (sub === '/tasks') return method === 'GET' ? { op: 'ListTasks' } : new NotAllowed('GET');
  const m = /^\/tasks\/([^/:]+)(:cancel|:subscribe|\/pushNotificationConfigs(?:\/[^/]*)?)?$/.exec(sub);
  if (!m) return new A2aError(A2aErrorCode.MethodNotFound, `no A2A operation at ${sub}`);
  let id: string;
  try {
    id = decodeURIComponent(m[1]);
  } catch {
    return new A2aError(A2aErrorCode.InvalidParams, 'the task id in the path is not valid percent-encoding');
  }
  const verb = m[2];
  if (verb === undefined) return method === 'GET' ? { op: 'GetTask', id } : new NotAllowed('GET');
  if (verb === ':cancel') return method === 'POST' ? { op: 'CancelTask', id } : new NotAllowed('POST');
  // §11.3.2 says POST; the proto's HTTP annotation says GET: both are taken.
  if (verb === ':subscribe') return method === 'POST' || method === 'GET' ? { op: 'SubscribeToTask', id } : new NotAllowed('GET, POST');
  return new A2aError(A2aErrorCode.PushNotificationNotSupported, 'push notifications are not supported by this agent');
}

/** Query parameters as the operation's params (§11.5: camelCase names, numbers and booleans as text). */
function queryParams(q: URLSearchParams): Record<string, unknown> {
  const p: Record<string, unknown> = {};
  for (const [k, v] of q) {
    if (k === 'pageSize' || k === 'historyLength') p[k] = /^\d{1,9}$/.test(v) ? Number(v) : v;
    else if (k === 'includeArtifacts') p[k] = v === 'true' ? true : v === 'false' ? false : v;
    else p[k] = v;
  }
  return p;
}

/** Served at `{prefix}/` (every path below the A2A path, `prefix` without its trailing `/`): the JSON-RPC route keeps the A2A path itself. */
export function a2aRestRoute(d: RpcRouteDeps & { prefix: string }): Route {
  const slots = d.slots ?? new StreamSlots();
  return {
    auth: 'required',
    admitsCallers: true,
    handle(req, res, ctx) {
      const url = new URL(req.url ?? '/', 'http://a2a.invalid');
      const fail = (e: A2aError, status?: number, headers?: Record<string, string>) => restError(res, e, status, headers);
      // The listener matched the raw path; URL parsing resolves `..` and `%2e%2e` segments: what is left must still
      // be below the A2A path (`/a2a/../ckp` is not an A2A path, `/a2a/%2e%2e/a2b/tasks` not ListTasks).
      if (!url.pathname.startsWith(`${d.prefix}/`)) {
        req.resume();
        fail(new A2aError(A2aErrorCode.MethodNotFound, 'no A2A operation at this path'));
        return;
      }
      const sub = url.pathname.slice(d.prefix.length);
      // The 0.3 HTTP+JSON binding (its /v1/ paths, proto-JSON of the 0.3 proto) is not served: 0.3 clients use
      // JSON-RPC. The 1.0 paths did not exist in 0.3, so a request on them without A2A-Version is read as 1.0.
      const version = req.headers['a2a-version'];
      const v = (Array.isArray(version) ? version[0] : version)?.trim() ?? '';
      const m = sub.startsWith('/v1/')
        ? new A2aError(A2aErrorCode.VersionNotSupported, 'the A2A 0.3 HTTP+JSON binding is not served: use JSON-RPC for 0.3, or these paths without /v1 for 1.0')
        : !['', '1', '1.0', '1.0.0'].includes(v)
          ? new A2aError(A2aErrorCode.VersionNotSupported, `A2A version ${v} is not served on HTTP+JSON (supported: 1.0)`)
          : match(req.method ?? '', sub);
      if (m instanceof A2aError) {
        req.resume();
        if (m instanceof NotAllowed) fail(m, 405, { allow: m.allow });
        else fail(m);
        return;
      }
      const run = (body: Record<string, unknown>) => void execute(d, slots, ctx, res, m, { ...queryParams(url.searchParams), ...body, ...(m.id !== undefined ? { id: m.id } : {}) });
      // Only SendMessage takes a body; a body elsewhere (a cancel's metadata) is read under the same cap and ignored.
      if (!m.body && (req.method === 'GET' || (!isJsonType(req.headers['content-type']) && !hasBody(req)))) {
        req.resume();
        run({});
        return;
      }
      receiveJson(req, res, d, (status, e, headers) => fail(e, status, headers), (text) => {
        if (!m.body) return run({});
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          return fail(new A2aError(A2aErrorCode.ParseError, 'the body is not JSON'));
        }
        if (!body || typeof body !== 'object' || Array.isArray(body)) return fail(new A2aError(A2aErrorCode.InvalidParams, 'the body must be a JSON object'));
        run(body as Record<string, unknown>);
      });
    },
  };
}

const hasBody = (req: IncomingMessage) => req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');

async function execute(d: RpcRouteDeps, slots: StreamSlots, ctx: RouteContext, res: ServerResponse, m: Match, params: Record<string, unknown>): Promise<void> {
  try {
    // A REST stream's events are the StreamResponse objects themselves (§11.7): no JSON-RPC envelope.
    const result = await runOperation(m.op, params, d.tasks(), '1.0', { res, caller: callerOf(ctx), slots, frame: (event) => event });
    if (result === STREAMED) return;
    // GetTask and CancelTask answer the Task itself; SendMessage its SendMessageResponse; ListTasks its response.
    sendJson(res, 200, result);
  } catch (e) {
    const err = a2aErrorOf(e);
    restError(res, err, err.status, err.headers);
  }
}
