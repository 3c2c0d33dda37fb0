// Tool arguments and swarm task inputs from the wire keep keys named __proto__, constructor and prototype
// (src/protocol/json-object.ts): they arrive as own properties from JSON.parse and must reach the tool as sent.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as v from 'valibot';
import { toolCallParams } from '../../src/protocol/wire-tools.ts';
import { delegateParams, toolTask } from '../../src/swarm/wire.ts';

const args = JSON.parse('{"constructor":"Ford","prototype":1,"__proto__":{"x":1},"plain":true}') as Record<string, unknown>;
const sent = JSON.stringify(args);

test('claw.tool.call arguments keep every own key, __proto__ included', () => {
  const p = v.parse(toolCallParams, { name: 'car', arguments: args, context: { request_id: 'r', identity: 'i' } });
  assert.is(JSON.stringify(p.arguments), sent);
  assert.is(Object.getPrototypeOf(p.arguments), Object.prototype, 'the prototype is not replaced');
});

test('swarm task input and a peer tool task keep every own key', () => {
  const d = v.parse(delegateParams, { task_id: 't', task: { description: 'd', input: args }, context: { request_id: 'r', swarm: 's' } });
  assert.is(JSON.stringify(d.task.input), sent);
  assert.is(JSON.stringify(v.parse(toolTask, { name: 'car', arguments: args }).arguments), sent);
});

test('arguments that are not an object are still refused', () => {
  for (const bad of [[], 'x', 1, null]) assert.not.ok(v.safeParse(toolCallParams, { name: 'car', arguments: bad, context: { request_id: 'r', identity: 'i' } }).success, JSON.stringify(bad));
});

test.run();
