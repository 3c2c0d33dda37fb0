// The request path: a request whose handler answers with a plain value is replied to inside
// Router.handle(), is never held in flight, and drains never wait for it; a promise is held until it
// settles. Tool calls take the one async gate path, with every refusal a rejection carrying its code.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Router, type Dispatch } from '../../src/kernel/router.ts';
import { InflightTracker } from '../../src/kernel/inflight.ts';
import { ProtocolError } from '../../src/protocol/errors.ts';
import { runGates } from '../../src/gates/pipeline.ts';
import { executeGate } from '../../src/gates/execute-gate.ts';
import { compileArgumentSchema } from '../../src/tools/json-schema.ts';
import { captureLogger, deferred, textFrame, type Reply } from './helpers/fakes.ts';
import { boundTool, makeCall, makeDeps, ok, settle, wire } from './helpers/gate-fakes.ts';
import type { ToolImpl, ToolResult, ToolRunContext } from '../../src/tools/types.ts';

const req = (id: number, method: string) => JSON.stringify({ jsonrpc: '2.0', id, method });

test('router: a plain value is answered inside handle(), with no token held; a promise is held until it settles', async () => {
  const inflight = new InflightTracker();
  const slow = deferred<string>();
  const sizes: number[] = [];
  const dispatch: Dispatch = (method) => {
    sizes.push(inflight.size);
    return method === 'slow' ? slow.promise : 'now';
  };
  const router = new Router({ dispatch, inflight, log: captureLogger() });
  const replies: Reply[] = [];
  router.handle(textFrame(req(1, 'fast'), replies), 't');
  assert.equal(replies, [{ jsonrpc: '2.0', id: 1, result: 'now' }], 'replied synchronously');
  assert.is(inflight.size, 0);
  router.handle(textFrame(req(2, 'slow'), replies), 't');
  assert.is(inflight.size, 1, 'the pending handler is held');
  router.handle(textFrame(req(3, 'fast'), replies), 't');
  assert.is(replies.length, 2, 'a later synchronous request does not wait for the slow one');
  assert.equal(sizes, [0, 0, 1]);
  const drained = inflight.drain(5_000);
  slow.resolve('late');
  assert.is(await drained, true);
  assert.equal(replies[2], { jsonrpc: '2.0', id: 2, result: 'late' });
  assert.is(inflight.size, 0);
});

test('router: a synchronous throw is the same error reply as a rejection', async () => {
  const err = () => new ProtocolError(-32010, 'Sandbox denied: x', { rule: 'r' });
  for (const dispatch of [(() => { throw err(); }) as Dispatch, (async () => { throw err(); }) as Dispatch]) {
    const replies: Reply[] = [];
    new Router({ dispatch, inflight: new InflightTracker(), log: captureLogger() }).handle(textFrame(req(7, 'x'), replies), 't');
    await new Promise((r) => setTimeout(r, 0));
    assert.equal(replies, [{ jsonrpc: '2.0', id: 7, error: { code: -32010, message: 'Sandbox denied: x', data: { rule: 'r' } } }]);
  }
});

test('inflight: tokens from begin() are not waited for unless held; drain(before) ignores later holds', async () => {
  const t = new InflightTracker();
  const a = t.begin();
  assert.is(await t.drain(1_000), true, 'nothing held');
  t.hold(a);
  const b = t.begin();
  t.hold(b);
  assert.is(t.size, 2);
  const onlyA = t.drain(2_000, b);
  t.end(a);
  assert.is(await onlyA, true);
  assert.is(await t.drain(20), false, 'b still held');
  t.end(b);
  t.end(b); // idempotent
  assert.is(t.size, 0);
});

/** A builtin-like tool whose own answer is synchronous, recording how often it ran. */
function syncImpl(answer: (args: Record<string, unknown>, ctx: ToolRunContext) => ToolResult): ToolImpl & { runs: number } {
  const impl = {
    kind: 'builtin' as const,
    touchesOs: false,
    runs: 0,
    async run(args: Record<string, unknown>, ctx: ToolRunContext) {
      impl.runs++;
      return answer(args, ctx);
    },
  };
  return impl;
}

test('gates: refusals reject with their codes; nothing runs', async () => {
  const impl = syncImpl(() => ok('ran'));
  const check = compileArgumentSchema({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] });
  const code = async (p: Promise<unknown>) => {
    const r = await settle(p);
    return 'error' in r ? wire(r.error).code : 'no error';
  };
  const deps = makeDeps({ autonomy: 'autonomous' });
  assert.is(await code(runGates(makeCall({ tool: boundTool({ impl }), args: { text: 1 } }), check, deps)), -32602);
  assert.is(await code(runGates(makeCall({ tool: boundTool({ impl }), args: { text: 'x' }, policies: [] }), check, deps)), -32011);
  assert.is(await code(runGates(makeCall({ tool: boundTool({ impl }), args: { text: 'x' } }), check, makeDeps({ autonomy: 'observer' }))), -32011);
  const dead = new AbortController();
  dead.abort();
  assert.is(await code(runGates(makeCall({ tool: boundTool({ impl }), args: { text: 'x' }, signal: dead.signal }), check, deps)), -32600);
  assert.is(impl.runs, 0);
  assert.equal(await runGates(makeCall({ tool: boundTool({ impl }), args: { text: 'x' } }), check, deps), ok('ran'));
  assert.is(impl.runs, 1);
});

test('execute: the signal a tool did not read is never created; one it reads is live; a throw is an isError result', async () => {
  const deps = makeDeps({ autonomy: 'autonomous' });
  let seen: AbortSignal | undefined;
  const reads = syncImpl((_a, ctx) => {
    seen = ctx.signal;
    return ok(String(ctx.signal.aborted));
  });
  assert.equal(await executeGate(makeCall({ tool: boundTool({ impl: reads }) }), deps, deps.redactText, deps.redactValue), ok('false'));
  assert.instance(seen, AbortSignal);
  const throws = syncImpl(() => {
    throw new Error('boom');
  });
  assert.equal(await executeGate(makeCall({ tool: boundTool({ impl: throws }) }), deps, deps.redactText, deps.redactValue), {
    content: [{ type: 'text', text: 't1 failed: boom' }],
    isError: true,
  });
});

test.run();
