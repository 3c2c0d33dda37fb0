import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MAX_BATCH, Router, type CallContext, type Dispatch } from '../../src/kernel/router.ts';
import { InflightTracker } from '../../src/kernel/inflight.ts';
import { ErrorCode, ProtocolError, ClawError } from '../../src/protocol/errors.ts';
import { encodeFrame } from '../../src/protocol/framing.ts';
import type { InboundFrame } from '../../src/kernel/ports.ts';
import type { JsonRpcResponse } from '../../src/protocol/jsonrpc.ts';
import { captureLogger, deferred, textFrame, tick, until, type Reply } from './helpers/fakes.ts';

interface Call {
  method: string;
  params: unknown;
  ctx: CallContext;
}

/** A router over a fake dispatch that echoes, throws, or waits on demand. */
function setup(opts: { dispatch?: Dispatch; maxDepth?: number } = {}) {
  const calls: Call[] = [];
  const replies: Reply[] = [];
  const responses: JsonRpcResponse[] = [];
  const log = captureLogger();
  const inflight = new InflightTracker();
  const dispatch: Dispatch =
    opts.dispatch ??
    (async (method, params, ctx) => {
      calls.push({ method, params, ctx });
      if (method === 'boom') throw new Error('secret internals: /etc/passwd at line 42');
      if (method === 'proto') throw new ProtocolError(ErrorCode.PolicyDenied, 'Policy denied: rule sec-003', { rule_id: 'sec-003' });
      if (method === 'clawerr') throw new ClawError('disk', 'ENOSPC writing /var/lib/claw/ledger');
      if (method === 'notfound') throw new ProtocolError(ErrorCode.MethodNotFound, 'Method not found: notfound');
      return { echo: params ?? null, method };
    });
  const wrapped: Dispatch = (m, p, c) => {
    if (opts.dispatch) calls.push({ method: m, params: p, ctx: c });
    return dispatch(m, p, c);
  };
  const router = new Router({ dispatch: wrapped, inflight, log, maxDepth: opts.maxDepth, onResponse: (m) => responses.push(m) });
  const send = async (text: string, transport = 'test') => {
    router.handle(textFrame(text, replies), transport);
    await tick();
  };
  const sendFrame = async (payload: InboundFrame['payload']) => {
    router.handle({ payload, reply: (m) => replies.push(m) }, 'test');
    await tick();
  };
  return { router, calls, replies, responses, log, inflight, send, sendFrame };
}

const req = (id: unknown, method = 'echo', params?: unknown) =>
  JSON.stringify(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params });

test('request: result with the exact id echoed (string, number, 0, null, fractional)', async () => {
  for (const id of ['req-001', 42, 0, null, 1.25, '']) {
    const s = setup();
    await s.send(req(id, 'echo', { x: 1 }));
    assert.equal(s.replies, [{ jsonrpc: '2.0', id, result: { echo: { x: 1 }, method: 'echo' } }], `id ${JSON.stringify(id)}`);
  }
});

test('request: ctx carries id, transport and an in-flight token', async () => {
  const s = setup();
  await s.send(req('a'), 'stdio');
  await s.send(req('b'), 'stdio');
  assert.is(s.calls[0].ctx.id, 'a');
  assert.is(s.calls[0].ctx.transport, 'stdio');
  assert.type(s.calls[0].ctx.token, 'number');
  assert.ok(s.calls[1].ctx.token! > s.calls[0].ctx.token!, 'tokens increase in arrival order');
});

test('request without params: dispatch gets undefined', async () => {
  const s = setup();
  await s.send(req(1));
  assert.is(s.calls[0].params, undefined);
});

test('notification: dispatched, never answered (also unknown methods and failures)', async () => {
  const s = setup();
  await s.send(JSON.stringify({ jsonrpc: '2.0', method: 'echo', params: { a: 1 } }));
  await s.send(JSON.stringify({ jsonrpc: '2.0', method: 'boom' }));
  await s.send(JSON.stringify({ jsonrpc: '2.0', method: 'notfound' }));
  await tick(5);
  assert.is(s.calls.length, 3);
  assert.is(s.calls[0].ctx.id, undefined);
  assert.equal(s.replies, []);
});

test('response from a peer: handed to onResponse, not answered', async () => {
  const s = setup();
  await s.send(JSON.stringify({ jsonrpc: '2.0', id: 5, result: 'ok' }));
  await s.send(JSON.stringify({ jsonrpc: '2.0', id: 6, error: { code: -1, message: 'x' } }));
  assert.equal(s.replies, []);
  assert.is(s.calls.length, 0);
  assert.equal(s.responses.map((r) => r.id), [5, 6]);
});

test('parse error: -32700 with id null, nothing dispatched', async () => {
  const s = setup();
  await s.send('{"jsonrpc":"2.0","id":1,"method":"echo"');
  await s.send('not json');
  await s.send('{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]');
  assert.is(s.replies.length, 3);
  for (const r of s.replies as any[]) {
    assert.is(r.jsonrpc, '2.0');
    assert.is(r.id, null);
    assert.is(r.error.code, -32700);
    assert.match(r.error.message, /^Parse error/);
  }
  assert.is(s.calls.length, 0);
});

test('invalid envelopes: -32600 with the id echoed when valid', async () => {
  const s = setup();
  await s.send('1');
  await s.send('"x"');
  await s.send(JSON.stringify({ jsonrpc: '1.0', id: 7, method: 'echo' }));
  await s.send(JSON.stringify({ jsonrpc: '2.0', id: 'p', method: 'echo', params: 'bar' }));
  await s.send(JSON.stringify({ jsonrpc: '2.0', id: { x: 1 }, method: 'echo' }));
  await s.send(JSON.stringify({ jsonrpc: '2.0', method: 1, params: 'bar' }));
  const got = (s.replies as any[]).map((r) => [r.id, r.error.code]);
  assert.equal(got, [
    [null, -32600],
    [null, -32600],
    [7, -32600],
    ['p', -32600],
    [null, -32600],
    [null, -32600],
  ]);
  assert.is(s.calls.length, 0);
});

test('batch: mixed requests, notifications and invalid elements', async () => {
  const s = setup();
  await s.send(
    JSON.stringify([
      { jsonrpc: '2.0', method: 'echo', params: [1, 2, 4] },
      { jsonrpc: '2.0', id: '1', method: 'echo', params: [1] },
      { jsonrpc: '2.0', method: 'notify_hello', params: [7] },
      { foo: 'boo' },
      { jsonrpc: '2.0', id: '5', method: 'notfound' },
      1,
      { jsonrpc: '2.0', id: '9', method: 'boom' },
    ]),
  );
  await tick(5);
  assert.is(s.replies.length, 1, 'one reply for the batch');
  const out = s.replies[0] as any[];
  assert.ok(Array.isArray(out));
  assert.equal(
    out.map((r) => [r.id, r.error?.code ?? 'ok']),
    [
      ['1', 'ok'],
      [null, -32600],
      ['5', -32601],
      [null, -32600],
      ['9', -32603],
    ],
  );
  assert.equal(s.calls.map((c) => c.method).sort(), ['boom', 'echo', 'echo', 'notfound', 'notify_hello']);
});

test('batch of only notifications: no reply at all', async () => {
  const s = setup();
  await s.send(JSON.stringify([{ jsonrpc: '2.0', method: 'echo' }, { jsonrpc: '2.0', method: 'boom' }]));
  await tick(5);
  assert.is(s.calls.length, 2);
  assert.equal(s.replies, []);
});

test('batch of only responses: no reply', async () => {
  const s = setup();
  await s.send(JSON.stringify([{ jsonrpc: '2.0', id: 1, result: 1 }]));
  assert.equal(s.replies, []);
  assert.is(s.responses.length, 1);
});

test('empty batch: a single -32600 (not an array), id null', async () => {
  const s = setup();
  await s.send('[]');
  assert.is(s.replies.length, 1);
  const r = s.replies[0] as any;
  assert.not.ok(Array.isArray(r));
  assert.is(r.id, null);
  assert.is(r.error.code, -32600);
});

test('batch over MAX_BATCH elements: one -32600 naming the limit, nothing run; at the limit every element is answered', async () => {
  // Each element costs a reply object: 2M one-byte elements in a 4 MB frame made 236 MB of replies.
  const s = setup();
  await s.send(`[${Array(MAX_BATCH + 1).fill(req(1)).join(',')}]`);
  assert.is(s.calls.length, 0, 'no element ran');
  assert.is(s.replies.length, 1);
  const r = s.replies[0] as any;
  assert.not.ok(Array.isArray(r));
  assert.is(r.id, null);
  assert.is(r.error.code, -32600);
  assert.match(r.error.message, new RegExp(`${MAX_BATCH + 1} messages.*${MAX_BATCH}`));
  const ok = setup();
  await ok.send(`[${Array(MAX_BATCH).fill('0').join(',')}]`);
  assert.is((ok.replies[0] as any[]).length, MAX_BATCH);
});

test('batch of invalid elements: an array with one -32600 per element', async () => {
  const s = setup();
  await s.send('[1,2,3]');
  const r = s.replies[0] as any[];
  assert.ok(Array.isArray(r));
  assert.is(r.length, 3);
  for (const e of r) {
    assert.is(e.id, null);
    assert.is(e.error.code, -32600);
  }
  // A nested empty array is an invalid element, not an empty batch.
  const s2 = setup();
  await s2.send('[[]]');
  assert.equal((s2.replies[0] as any[]).map((e) => e.error.code), [-32600]);
});

test('depth bomb: rejected with -32600 before dispatch, id echoed', async () => {
  const s = setup();
  const deep = '['.repeat(10_000) + ']'.repeat(10_000);
  await s.send(`{"jsonrpc":"2.0","id":"deep","method":"echo","params":${deep}}`);
  await s.send(deep);
  assert.is(s.calls.length, 0);
  const [a, b] = s.replies as any[];
  assert.is(a.id, 'deep');
  assert.is(a.error.code, -32600);
  assert.match(a.error.message, /deeper than 128/);
  assert.is(b.id, null);
  assert.is(b.error.code, -32600);
});

test('a frame nesting past 16,384 levels is refused unparsed (id null) in a bounded time: JSON.parse would hold the loop for seconds', async () => {
  const s = setup();
  const deep = '['.repeat(2_000_000) + ']'.repeat(2_000_000);
  const t0 = performance.now();
  await s.send(`{"jsonrpc":"2.0","id":"deep","method":"echo","params":${deep}}`);
  const took = performance.now() - t0;
  const [a] = s.replies as any[];
  assert.equal([a.id, a.error.code], [null, -32600]);
  assert.match(a.error.message, /deeper than 128/);
  assert.is(s.calls.length, 0);
  assert.ok(took < 500, `took ${took.toFixed(0)} ms`);
  // Brackets inside strings are not nesting: a long string of them is an ordinary request.
  await s.send(JSON.stringify({ jsonrpc: '2.0', id: 'str', method: 'echo', params: { s: '['.repeat(40_000) } }));
  assert.is(s.calls.length, 1);
});

/** `{"jsonrpc":..., "params": {"a": {"a": ...}}}` whose deepest value nests `depth` levels (envelope = 1). */
const nested = (depth: number, id: unknown = 1) => {
  let params: unknown = {};
  for (let i = 2; i < depth; i++) params = { a: params };
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'echo', params });
};

test('depth limit (docs/runtime-config.md: max_depth = deepest accepted nesting): N accepted, N+1 rejected', async () => {
  // Sanity: nested(n) nests exactly n levels.
  assert.is(nested(4), '{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":{"a":{}}}}');
  const s = setup({ maxDepth: 4 });
  await s.send(nested(4, 'ok'));
  assert.is((s.replies[0] as any).id, 'ok');
  assert.ok('result' in (s.replies[0] as any), 'depth 4 is accepted with max_depth 4');
  await s.send(nested(5, 'too-deep'));
  const r = s.replies[1] as any;
  assert.is(r.id, 'too-deep');
  assert.is(r.error?.code, -32600, 'a message nesting 5 levels exceeds max_depth 4');
});

test('default depth 128: a 128-level message is dispatched', async () => {
  const s = setup();
  await s.send(nested(128, 'x'));
  assert.ok('result' in (s.replies[0] as any));
});

test('oversize frame: -32600, id null, limit in data', async () => {
  const s = setup();
  await s.sendFrame({ error: 'oversize', bytes: 5_000_000, limit: 4_194_304 });
  assert.equal(s.replies, [
    {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'Invalid request: frame of 5000000 bytes exceeds the 4194304-byte limit', data: { limit: 4_194_304 } },
    },
  ]);
});

test('encoding frame: -32700, id null', async () => {
  const s = setup();
  await s.sendFrame({ error: 'encoding' });
  const r = s.replies[0] as any;
  assert.is(r.id, null);
  assert.is(r.error.code, -32700);
  assert.match(r.error.message, /UTF-8/);
});

test('handler throwing a plain Error: -32603 "Internal error", no internals on the wire, details logged', async () => {
  const s = setup();
  await s.send(req(3, 'boom'));
  assert.equal(s.replies, [{ jsonrpc: '2.0', id: 3, error: { code: -32603, message: 'Internal error' } }]);
  assert.not.match(JSON.stringify(s.replies), /passwd|secret internals/);
  const e = s.log.entries.find((x) => x.level === 'error');
  assert.ok(e, 'logged');
  assert.match(String(e!.fields?.error), /secret internals/);
  assert.is(e!.fields?.method, 'boom');
});

test('handler throwing a ClawError or a non-Error: -32603 without internals', async () => {
  const s = setup({
    dispatch: async (m) => {
      if (m === 'str') throw 'raw string /secret/path';
      if (m === 'undef') throw undefined;
      throw new ClawError('disk', 'ENOSPC writing /var/lib/claw/ledger');
    },
  });
  await s.send(req(1, 'claw'));
  await s.send(req(2, 'str'));
  await s.send(req(3, 'undef'));
  assert.equal(
    (s.replies as any[]).map((r) => [r.id, r.error]),
    [
      [1, { code: -32603, message: 'Internal error' }],
      [2, { code: -32603, message: 'Internal error' }],
      [3, { code: -32603, message: 'Internal error' }],
    ],
  );
});

test('ProtocolError passes through with its code, message and data', async () => {
  const s = setup();
  await s.send(req('pe', 'proto'));
  assert.equal(s.replies, [
    { jsonrpc: '2.0', id: 'pe', error: { code: -32011, message: 'Policy denied: rule sec-003', data: { rule_id: 'sec-003' } } },
  ]);
  assert.is(s.log.entries.filter((e) => e.level === 'error').length, 0, 'expected errors are not logged as failures');
});

test('a dispatch that throws synchronously still gets an answer', async () => {
  const s = setup({
    dispatch: ((m: string) => {
      throw new ProtocolError(-32601, `Method not found: ${m}`);
    }) as unknown as Dispatch,
  });
  await s.send(req(1, 'sync'));
  assert.equal(s.replies, [{ jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'Method not found: sync' } }]);
});

test('a handler returning undefined still produces a valid success response on the wire (result is REQUIRED)', async () => {
  const s = setup({ dispatch: async () => undefined });
  await s.send(req(1, 'void'));
  assert.is(s.replies.length, 1);
  // What a transport writes: encodeFrame(reply). JSON-RPC 2.0 §5: result is REQUIRED on success.
  const wire = JSON.parse(encodeFrame(s.replies[0]));
  assert.ok('result' in wire || 'error' in wire, `reply on the wire must carry result or error: ${JSON.stringify(wire)}`);
});

test('concurrency: a slow request does not block a fast one; replies in completion order', async () => {
  const gate = deferred<string>();
  const s = setup({
    dispatch: async (m) => {
      if (m === 'slow') return gate.promise;
      return 'fast';
    },
  });
  await s.send(req('s', 'slow'));
  await s.send(req('f', 'fast'));
  assert.equal(s.replies, [{ jsonrpc: '2.0', id: 'f', result: 'fast' }], 'fast answered while slow is pending');
  assert.is(s.inflight.size, 1);
  gate.resolve('slow-done');
  await until(() => s.replies.length === 2);
  assert.equal((s.replies as any[]).map((r) => r.id), ['f', 's']);
  assert.is(s.inflight.size, 0);
});

test('concurrency: several frames in flight at once, each answered with its own id', async () => {
  const gates = [deferred<number>(), deferred<number>(), deferred<number>()];
  const s = setup({ dispatch: async (_m, p) => gates[(p as number[])[0]].promise });
  for (let i = 0; i < 3; i++) await s.send(req(`r${i}`, 'wait', [i]));
  assert.is(s.inflight.size, 3);
  gates[2].resolve(20);
  gates[0].resolve(0);
  await tick();
  gates[1].resolve(10);
  await until(() => s.replies.length === 3);
  assert.equal(
    (s.replies as any[]).map((r) => [r.id, r.result]),
    [
      ['r2', 20],
      ['r0', 0],
      ['r1', 10],
    ],
  );
});

test('in-flight tracking: requests and notifications are tracked until they settle', async () => {
  const gate = deferred();
  const s = setup({ dispatch: async () => gate.promise });
  await s.send(req(1, 'a'));
  await s.send(JSON.stringify({ jsonrpc: '2.0', method: 'n' }));
  assert.is(s.inflight.size, 2);
  gate.resolve();
  await until(() => s.inflight.size === 0);
});

test('router.handle never throws, even when reply() throws', async () => {
  const s = setup();
  const frame: InboundFrame = {
    payload: { text: req(1) },
    reply: () => {
      throw new Error('EPIPE');
    },
  };
  s.router.handle(frame, 'test');
  await tick(5);
  assert.ok(s.log.entries.some((e) => e.level === 'error' && /EPIPE/.test(String(e.fields?.error))));
});

test.run();
