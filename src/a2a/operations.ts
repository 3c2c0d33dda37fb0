// The A2A operations (A2A 1.0 §3.1) over the task service, shared by both bindings: the JSON-RPC route names them
// by method (rpc-route.ts), the HTTP+JSON route by path (rest-route.ts). Params arrive as the 1.0 request JSON
// (0.3 params differ only where noted). A streaming operation writes its SSE response itself and returns STREAMED.
import type { ServerResponse } from 'node:http';
import { illFormedPath } from '../protocol/well-formed.ts';
import { workingOn } from '../transports/http/reply.ts';
import { A2aError, A2aErrorCode } from './errors.ts';
import { StreamLimitError, streamTask, type StreamSlots } from './stream.ts';
import type { TaskService } from './tasks.ts';
import { TERMINAL_STATES, type A2aTask } from './types.ts';
import { parseMessage, parseState, wireTask, type WireVersion } from './wire.ts';

export type Operation = 'SendMessage' | 'SendStreamingMessage' | 'GetTask' | 'ListTasks' | 'CancelTask' | 'SubscribeToTask';

/** What a streaming operation needs: the response to write, who asks (the per-caller cap), how to wrap an event. */
export interface StreamIo {
  res: ServerResponse;
  /** The authenticated caller's user id on the A2A channel (access.ts): it sees and continues only its own tasks. */
  caller: string;
  slots: StreamSlots;
  frame: (event: unknown) => unknown;
}

export const STREAMED = Symbol('streamed');

type Handler = (p: Record<string, unknown>, tasks: TaskService, v: WireVersion, io: StreamIo) => unknown;

/** JSON-RPC method names per dialect. 0.3 has no tasks/list on JSON-RPC. */
export const RPC_METHODS: Record<WireVersion, Record<string, Operation>> = {
  '1.0': { SendMessage: 'SendMessage', SendStreamingMessage: 'SendStreamingMessage', GetTask: 'GetTask', ListTasks: 'ListTasks', CancelTask: 'CancelTask', SubscribeToTask: 'SubscribeToTask' },
  '0.3': { 'message/send': 'SendMessage', 'message/stream': 'SendStreamingMessage', 'tasks/get': 'GetTask', 'tasks/cancel': 'CancelTask', 'tasks/resubscribe': 'SubscribeToTask' },
};

const optInt = (x: unknown, name: string): number | undefined => {
  if (x === undefined || x === null) return undefined;
  if (typeof x !== 'number' || !Number.isInteger(x) || x < 0) throw new A2aError(A2aErrorCode.InvalidParams, `${name} must be a non-negative integer`);
  return x;
};
const reqId = (p: Record<string, unknown>): string => {
  if (typeof p.id !== 'string' || p.id === '') throw new A2aError(A2aErrorCode.InvalidParams, 'id (the task id) is required');
  return p.id;
};
const messageOf = (p: Record<string, unknown>) => {
  const message = parseMessage(p.message);
  if (typeof message === 'string') throw new A2aError(A2aErrorCode.InvalidParams, message);
  return message;
};

/** A slot for one more stream from this caller, or the refusal (HTTP 429 on either binding). */
function slot(io: StreamIo): () => void {
  const release = io.slots.take(io.caller);
  if (!release) throw new StreamLimitError(`too many open streams (at most ${io.slots.limits.perCaller} per caller, ${io.slots.limits.total} in all)`);
  return release;
}

const OPERATIONS: Record<Operation, Handler> = {
  async SendMessage(p, tasks, v, io) {
    const message = messageOf(p);
    const c = (p.configuration ?? {}) as Record<string, unknown>;
    // 1.0: returnImmediately (default false); 0.3: blocking (this runtime waits unless it is false).
    const wait = v === '1.0' ? c.returnImmediately !== true : c.blocking !== false;
    const historyLength = optInt(c.historyLength, 'configuration.historyLength');
    // A blocking send waits for the whole turn (1.0 §3.1.1), longer than request_timeout_ms with a slow tool.
    const written = wait ? workingOn(io.res) : () => {};
    let t;
    try {
      t = await tasks.create(message, { wait, caller: io.caller });
    } finally {
      written();
    }
    const task = wireTask(t, v, { historyLength });
    return v === '1.0' ? { task } : task;
  },
  async SendStreamingMessage(p, tasks, v, io) {
    const message = messageOf(p);
    const release = slot(io);
    try {
      const t = await tasks.create(message, { wait: false, caller: io.caller });
      streamTask({ res: io.res, tasks, id: t.id, version: v, frame: io.frame, limits: io.slots.limits, release });
    } catch (e) {
      release();
      throw e;
    }
    return STREAMED;
  },
  GetTask: (p, tasks, v, io) => wireTask(tasks.get(reqId(p), io.caller), v, { historyLength: optInt(p.historyLength, 'historyLength') }),
  CancelTask: (p, tasks, v, io) => wireTask(tasks.cancel(reqId(p), io.caller), v),
  ListTasks(p, tasks, v, io) {
    let state;
    if (p.status !== undefined && p.status !== 'TASK_STATE_UNSPECIFIED') {
      state = parseState(p.status);
      if (!state) throw new A2aError(A2aErrorCode.InvalidParams, `unknown status ${String(p.status)}`);
    }
    if (p.contextId !== undefined && typeof p.contextId !== 'string') throw new A2aError(A2aErrorCode.InvalidParams, 'contextId must be a string');
    if (p.pageToken !== undefined && typeof p.pageToken !== 'string') throw new A2aError(A2aErrorCode.InvalidParams, 'pageToken must be a string');
    const o = { historyLength: optInt(p.historyLength, 'historyLength') ?? 0, artifacts: p.includeArtifacts === true };
    const weigh = (t: A2aTask) => JSON.stringify(wireTask(t, v, o)).length;
    const page = tasks.list({ contextId: (p.contextId as string) || undefined, state, pageSize: optInt(p.pageSize, 'pageSize') || undefined, pageToken: (p.pageToken as string) || undefined, weigh }, io.caller);
    return {
      tasks: page.tasks.map((t) => wireTask(t, v, o)),
      nextPageToken: page.nextPageToken,
      pageSize: page.tasks.length,
      totalSize: page.totalSize,
    };
  },
  SubscribeToTask(p, tasks, v, io) {
    const t = tasks.get(reqId(p), io.caller);
    // 1.0 §3.1.6: a task already terminal has nothing more to stream; GetTask reads it.
    if (TERMINAL_STATES.has(t.state)) throw new A2aError(A2aErrorCode.UnsupportedOperation, `task ${t.id} is already ${t.state}: nothing more will stream (GetTask reads it)`);
    streamTask({ res: io.res, tasks, id: t.id, version: v, frame: io.frame, limits: io.slots.limits, release: slot(io) });
    return STREAMED;
  },
};

/** Runs one operation: the checks every binding shares, then its handler. */
export function runOperation(op: Operation, params: unknown, tasks: TaskService | undefined, v: WireVersion, io: StreamIo): unknown {
  if (!params || typeof params !== 'object' || Array.isArray(params)) throw new A2aError(A2aErrorCode.InvalidParams, 'params must be an object');
  // A lone surrogate cannot be stored or sent on as UTF-8 (protocol/well-formed.ts): refused, as on the CKP wire.
  const bad = illFormedPath(params, 'params');
  if (bad !== undefined) throw new A2aError(A2aErrorCode.InvalidParams, `${bad}: a string holds a lone UTF-16 surrogate (not well-formed Unicode)`);
  if (!tasks) throw new A2aError(A2aErrorCode.InternalError, 'the agent is not running (no session started)');
  return OPERATIONS[op](params as Record<string, unknown>, tasks, v, io);
}
