// fastToolCallParams (src/protocol/wire-tools.ts) against valibot's toolCallParams: for every input,
// either the fast path gives up (undefined) or its output equals valibot's, key for key.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as v from 'valibot';
import { fastToolCallParams, toolCallParams } from '../../src/protocol/wire-tools.ts';

const ctx = { request_id: 'r-1', identity: 'a' };
const inputs: unknown[] = [
  { name: 'echo', arguments: { text: 'hi' }, context: ctx },
  { name: 'echo', context: ctx },
  { name: 'echo', arguments: {}, context: { ...ctx, sandbox: 'sb', policy: 'p', skill: '' } },
  { name: 'echo', arguments: { a: [1, { b: null }] }, context: { ...ctx, skill: 'x' }, extra: 1 },
  { name: 'echo', arguments: { text: 'hi' }, context: { ...ctx, other: true } },
  // valibot rejects or reshapes these: the fast path must give up on each
  { name: '', arguments: {}, context: ctx },
  { name: 1, context: ctx },
  { name: 'echo', arguments: [], context: ctx },
  { name: 'echo', arguments: null, context: ctx },
  { name: 'echo', arguments: 'x', context: ctx },
  { name: 'echo', context: { request_id: '', identity: 'a' } },
  { name: 'echo', context: { request_id: 'r', identity: 7 } },
  { name: 'echo', context: { ...ctx, sandbox: '' } },
  { name: 'echo', context: { ...ctx, policy: 3 } },
  { name: 'echo', context: { ...ctx, skill: 3 } },
  { name: 'echo', context: [] },
  { name: 'echo' },
  JSON.parse('{"name":"echo","arguments":{"__proto__":{"x":1},"a":1},"context":{"request_id":"r","identity":"a"}}'),
  JSON.parse('{"name":"echo","arguments":{"constructor":1},"context":{"request_id":"r","identity":"a"}}'),
  JSON.parse('{"name":"echo","arguments":{"prototype":1},"context":{"request_id":"r","identity":"a"}}'),
  [],
  null,
  undefined,
  'x',
];

test('the fast path equals valibot whenever it answers, and answers for the plainly valid shapes', () => {
  let answered = 0;
  for (const input of inputs) {
    const fast = fastToolCallParams(input);
    const slow = v.safeParse(toolCallParams, input);
    if (fast === undefined) continue;
    answered++;
    assert.ok(slow.success, `fast path accepted what valibot rejects: ${JSON.stringify(input)}`);
    assert.equal(fast, slow.output);
    assert.equal(Object.keys(fast.context), Object.keys(slow.output.context), 'same context keys, same order');
  }
  assert.is(answered, 5);
});

test('the fast path gives up on everything valibot rejects', () => {
  for (const input of inputs) if (!v.safeParse(toolCallParams, input).success) assert.is(fastToolCallParams(input), undefined);
});

test.run();
