// JSON-RPC 2.0 envelope classification (https://www.jsonrpc.org/specification, spec §9.1).
// Pure: takes a parsed JSON value, says what it is. No I/O.
import { ErrorCode, ProtocolError } from './errors.ts';

export type JsonRpcId = string | number | null;

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: string | number | null;
  method: string;
  params?: unknown;
}
export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: unknown;
}
export interface JsonRpcSuccess {
  jsonrpc: '2.0';
  id: JsonRpcId;
  result: unknown;
}
export interface JsonRpcFailure {
  jsonrpc: '2.0';
  id: JsonRpcId;
  error: { code: number; message: string; data?: unknown };
}
export type JsonRpcResponse = JsonRpcSuccess | JsonRpcFailure;
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

export type Classified =
  | { type: 'request'; msg: JsonRpcRequest }
  | { type: 'notification'; msg: JsonRpcNotification }
  | { type: 'response'; msg: JsonRpcResponse }
  | { type: 'invalid'; id: JsonRpcId; reason: string };

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** The id to echo in an error reply for an invalid envelope: the request's own id when it is a valid id. */
function echoableId(x: Record<string, unknown>): JsonRpcId {
  const id = x.id;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}

export function classify(x: unknown): Classified {
  if (!isObject(x)) return { type: 'invalid', id: null, reason: 'a JSON-RPC message must be an object' };
  const id = echoableId(x);
  if (x.jsonrpc !== '2.0') return { type: 'invalid', id, reason: 'jsonrpc must be exactly "2.0"' };
  const hasId = 'id' in x;
  if (hasId && !(x.id === null || typeof x.id === 'string' || (typeof x.id === 'number' && Number.isFinite(x.id)))) {
    return { type: 'invalid', id: null, reason: 'id must be a string, a number or null' };
  }
  if ('method' in x) {
    if (typeof x.method !== 'string' || x.method.length === 0) {
      return { type: 'invalid', id, reason: 'method must be a non-empty string' };
    }
    if ('params' in x && !(isObject(x.params) || Array.isArray(x.params))) {
      return { type: 'invalid', id, reason: 'params must be an object or an array when present' };
    }
    if ('result' in x || 'error' in x) return { type: 'invalid', id, reason: 'a request cannot carry result or error' };
    if (!hasId) return { type: 'notification', msg: x as unknown as JsonRpcNotification };
    return { type: 'request', msg: x as unknown as JsonRpcRequest };
  }
  if (hasId && ('result' in x) !== ('error' in x)) {
    if ('error' in x && !(isObject(x.error) && typeof x.error.code === 'number' && typeof x.error.message === 'string')) {
      return { type: 'invalid', id, reason: 'error must be an object with a numeric code and a message' };
    }
    return { type: 'response', msg: x as unknown as JsonRpcResponse };
  }
  return { type: 'invalid', id, reason: 'method is required' };
}

export function success(id: JsonRpcId, result: unknown): JsonRpcSuccess {
  // `result` is REQUIRED on success (JSON-RPC 2.0 §5); JSON.stringify would drop an undefined one.
  return { jsonrpc: '2.0', id, result: result === undefined ? null : result };
}

export function failure(id: JsonRpcId, err: ProtocolError): JsonRpcFailure {
  return { jsonrpc: '2.0', id, error: err.toJSON() };
}

export function notification(method: string, params?: unknown): JsonRpcNotification {
  return params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params };
}

export const invalidRequest = (reason: string) => new ProtocolError(ErrorCode.InvalidRequest, `Invalid request: ${reason}`);
