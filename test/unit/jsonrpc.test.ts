import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { classify, success, failure, notification, invalidRequest, type Classified } from '../../src/protocol/jsonrpc.ts';
import { ErrorCode, ProtocolError, ClawError } from '../../src/protocol/errors.ts';

const inv = (c: Classified) => {
  assert.is(c.type, 'invalid');
  return c as Extract<Classified, { type: 'invalid' }>;
};

test('requests: string, number, zero, negative, fractional and null ids', () => {
  for (const id of ['req-1', '', 1, 0, -7, 1.5, null]) {
    const msg = { jsonrpc: '2.0', id, method: 'claw.status' };
    const c = classify(msg);
    assert.is(c.type, 'request', `id ${JSON.stringify(id)}`);
    assert.is((c as any).msg, msg);
  }
});

test('requests: params object, array, empty object, empty array', () => {
  for (const params of [{ a: 1 }, [1, 2], {}, []]) {
    assert.is(classify({ jsonrpc: '2.0', id: 1, method: 'm', params }).type, 'request');
  }
});

test('notifications: no id member (with and without params)', () => {
  assert.is(classify({ jsonrpc: '2.0', method: 'claw.initialized' }).type, 'notification');
  assert.is(classify({ jsonrpc: '2.0', method: 'x', params: [1] }).type, 'notification');
  assert.is(classify({ jsonrpc: '2.0', method: 'x', params: {} }).type, 'notification');
});

test('id: null is a request, not a notification', () => {
  assert.is(classify({ jsonrpc: '2.0', id: null, method: 'x' }).type, 'request');
});

test('responses: result, error, null result, null id on error', () => {
  assert.is(classify({ jsonrpc: '2.0', id: 1, result: { ok: true } }).type, 'response');
  assert.is(classify({ jsonrpc: '2.0', id: 'a', result: null }).type, 'response');
  assert.is(classify({ jsonrpc: '2.0', id: 2, error: { code: -32601, message: 'nope' } }).type, 'response');
  assert.is(classify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error', data: 1 } }).type, 'response');
});

test('invalid: not an object → id null', () => {
  for (const x of [null, 1, 'str', true, [], [1], undefined]) {
    const c = inv(classify(x));
    assert.is(c.id, null);
    assert.ok(c.reason.length > 0);
  }
});

test('invalid: jsonrpc missing or wrong → echoes a valid id', () => {
  assert.is(inv(classify({ id: 5, method: 'm' })).id, 5);
  assert.is(inv(classify({ jsonrpc: '1.0', id: 'x', method: 'm' })).id, 'x');
  assert.is(inv(classify({ jsonrpc: 2.0, id: 3, method: 'm' })).id, 3);
  assert.is(inv(classify({ jsonrpc: '2.0 ', id: 4, method: 'm' })).id, 4);
  assert.is(inv(classify({ jsonrpc: '1.0', method: 'm' })).id, null);
  assert.match(inv(classify({ id: 5, method: 'm' })).reason, /jsonrpc/);
});

test('invalid: id of a wrong type → id null', () => {
  for (const id of [{}, [1], true, false, Infinity, NaN]) {
    const c = inv(classify({ jsonrpc: '2.0', id, method: 'm' }));
    assert.is(c.id, null, `id ${String(id)}`);
    assert.match(c.reason, /id/);
  }
});

test('invalid: method not a string / empty → echoes id', () => {
  for (const method of [1, null, {}, [], '', true]) {
    const c = inv(classify({ jsonrpc: '2.0', id: 9, method }));
    assert.is(c.id, 9);
    assert.match(c.reason, /method/);
  }
  // JSON-RPC spec example: {"jsonrpc":"2.0","method":1,"params":"bar"} → invalid, id null.
  assert.is(inv(classify({ jsonrpc: '2.0', method: 1, params: 'bar' })).id, null);
});

test('invalid: params that are not structured → echoes id', () => {
  for (const params of ['bar', 1, null, true]) {
    const c = inv(classify({ jsonrpc: '2.0', id: 'p', method: 'm', params }));
    assert.is(c.id, 'p');
    assert.match(c.reason, /params/);
  }
});

test('invalid: request carrying result or error → echoes id', () => {
  assert.is(inv(classify({ jsonrpc: '2.0', id: 1, method: 'm', result: 1 })).id, 1);
  assert.is(inv(classify({ jsonrpc: '2.0', id: 2, method: 'm', error: { code: 1, message: 'x' } })).id, 2);
});

test('invalid: neither method nor a response shape → "method is required", echoes id', () => {
  const c = inv(classify({ jsonrpc: '2.0', id: 7 }));
  assert.is(c.id, 7);
  assert.match(c.reason, /method is required/);
  assert.is(inv(classify({ jsonrpc: '2.0' })).id, null);
  // Both result and error: not a response.
  assert.is(inv(classify({ jsonrpc: '2.0', id: 8, result: 1, error: { code: 1, message: 'm' } })).id, 8);
  // A result without an id is not a response either.
  assert.is(inv(classify({ jsonrpc: '2.0', result: 1 })).id, null);
});

test('invalid: malformed error object in a response → echoes id', () => {
  for (const error of [null, 'boom', { code: 'x', message: 'm' }, { code: 1 }, { message: 'm' }, [1]]) {
    const c = inv(classify({ jsonrpc: '2.0', id: 'r', error }));
    assert.is(c.id, 'r');
    assert.match(c.reason, /error/);
  }
});

test('builders: success, failure (with and without data), notification', () => {
  assert.equal(success(1, { a: 1 }), { jsonrpc: '2.0', id: 1, result: { a: 1 } });
  assert.equal(failure('x', new ProtocolError(ErrorCode.MethodNotFound, 'Method not found: m')), {
    jsonrpc: '2.0',
    id: 'x',
    error: { code: -32601, message: 'Method not found: m' },
  });
  assert.equal(failure(null, new ProtocolError(-32602, 'bad', { issues: [] })), {
    jsonrpc: '2.0',
    id: null,
    error: { code: -32602, message: 'bad', data: { issues: [] } },
  });
  assert.equal(notification('claw.heartbeat'), { jsonrpc: '2.0', method: 'claw.heartbeat' });
  assert.equal(notification('claw.heartbeat', { a: 1 }), { jsonrpc: '2.0', method: 'claw.heartbeat', params: { a: 1 } });
  const e = invalidRequest('empty batch');
  assert.is(e.code, -32600);
  assert.match(e.message, /^Invalid request: empty batch$/);
});

test('error codes: spec §9.4 values, each code used once', () => {
  assert.is(ErrorCode.ParseError, -32700);
  assert.is(ErrorCode.InvalidRequest, -32600);
  assert.is(ErrorCode.MethodNotFound, -32601);
  assert.is(ErrorCode.InvalidParams, -32602);
  assert.is(ErrorCode.InternalError, -32603);
  assert.is(ErrorCode.ProtocolVersionNotSupported, -32001);
  assert.is(ErrorCode.SandboxDenied, -32010);
  assert.is(ErrorCode.PolicyDenied, -32011);
  assert.is(ErrorCode.ApprovalTimeout, -32012);
  assert.is(ErrorCode.ApprovalDenied, -32013);
  assert.is(ErrorCode.ToolTimeout, -32014);
  assert.is(ErrorCode.ProviderQuotaExceeded, -32021);
  const codes = Object.values(ErrorCode);
  assert.is(new Set(codes).size, codes.length);
});

test('ClawError keeps code and cause; ProtocolError serializes without undefined data', () => {
  const cause = new Error('root');
  const c = new ClawError('usage', 'bad flag', { cause });
  assert.is(c.code, 'usage');
  assert.is(c.cause, cause);
  assert.is(c.name, 'ClawError');
  assert.equal(JSON.parse(JSON.stringify(new ProtocolError(-32603, 'Internal error'))), { code: -32603, message: 'Internal error' });
});

test.run();
