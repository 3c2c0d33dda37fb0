// compileArgumentSchema (src/tools/json-schema.ts): draft 2020-12, every failing path listed.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { compileArgumentSchema } from '../../src/tools/json-schema.ts';

const schema = {
  type: 'object',
  properties: {
    a: { type: 'object', properties: { b: { type: 'array', items: { type: 'string' } } }, required: ['b'] },
    mode: { enum: ['fast', 'slow'] },
    n: { type: 'integer', minimum: 1 },
    c: {},
  },
  required: ['a', 'c'],
  additionalProperties: false,
};

test('valid arguments → no issues', () => {
  assert.equal(compileArgumentSchema(schema)({ a: { b: ['x'] }, c: 1, mode: 'fast', n: 2 }), []);
  assert.equal(compileArgumentSchema({ type: 'object' })({}), []);
});

test('every failing path: required, nested /a/b/0 and /a/b/2, enum, minimum, additionalProperties (once)', () => {
  const issues = compileArgumentSchema(schema)({ a: { b: [1, 'x', 2] }, mode: 'medium', n: 0, z: true });
  const leaf = issues.filter((i) => !['properties', 'items'].includes(i.keyword)).map((i) => [i.path, i.keyword]);
  assert.equal(leaf, [
    ['', 'required'],
    ['/a/b/0', 'type'],
    ['/a/b/2', 'type'],
    ['/mode', 'enum'],
    ['/n', 'minimum'],
    ['', 'additionalProperties'],
  ]);
  assert.not.ok(issues.some((i) => i.keyword === 'false'));
  assert.ok(issues.every((i) => typeof i.message === 'string' && i.message.length > 0));
  assert.equal(compileArgumentSchema(schema)({ a: {}, c: 1 }).map((i) => [i.path, i.keyword]), [['', 'properties'], ['/a', 'required']]);
  assert.equal(compileArgumentSchema({ type: 'object' })([]).map((i) => [i.path, i.keyword]), [['', 'type']]);
});

test('2020-12 keywords: prefixItems, $defs/$ref, dependentRequired', () => {
  const check = compileArgumentSchema({
    $defs: { s: { type: 'string' } },
    type: 'object',
    properties: { t: { prefixItems: [{ type: 'integer' }, { $ref: '#/$defs/s' }] } },
    dependentRequired: { x: ['y'] },
  });
  assert.equal(check({ t: [1, 'a'] }), []);
  const got = check({ t: [1, 2], x: 1 }).map((i) => `${i.path} ${i.keyword}`);
  assert.ok(got.includes('/t/1 type'), got.join(', '));
  assert.ok(got.includes(' dependentRequired'), got.join(', '));
});

test.run();
