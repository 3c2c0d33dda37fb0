// JSON Schema `pattern` / `patternProperties` of a tool's input_schema are user-written regular expressions:
// they run in linear time, and ones that need backtracking are refused when the schema is checked.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { compileArgumentSchema, schemaProblem } from '../../src/tools/json-schema.ts';
import { schemaPatternIssues } from '../../src/manifest/checks/schema-patterns.ts';

test('pattern and patternProperties still decide validity', () => {
  const check = compileArgumentSchema({
    type: 'object',
    properties: { id: { type: 'string', pattern: '^[a-z]{2,4}-\\d+$' } },
    patternProperties: { '^x-': { type: 'number' } },
  });
  assert.equal(check({ id: 'ab-12', 'x-a': 1 }), []);
  assert.equal(check({ id: 'ABC-1' }).map((i) => i.keyword), ['properties', 'pattern']);
  assert.equal(check({ 'x-a': 'no' }).map((i) => i.keyword), ['patternProperties', 'type']);
  assert.is(RegExp, globalThis.RegExp);
  assert.ok(/a/ instanceof RegExp, 'the host RegExp is back after validation');
});

test('a catastrophic pattern on a large argument answers in linear time', () => {
  const check = compileArgumentSchema({ type: 'object', properties: { q: { type: 'string', pattern: '^(a+)+$' }, r: { type: 'string', pattern: '.*password.*=.*' } } });
  const t0 = performance.now();
  assert.equal(check({ q: `${'a'.repeat(50_000)}!` }).map((i) => i.keyword), ['properties', 'pattern']);
  assert.equal(check({ r: 'password '.repeat(5000) }).map((i) => i.keyword), ['properties', 'pattern']);
  // The host engine needs longer than the age of the universe for the first and minutes for the second.
  assert.ok(performance.now() - t0 < 2000, `took ${performance.now() - t0} ms`);
});

test('patterns that need backtracking are refused, naming the schema path', () => {
  assert.match(schemaProblem({ type: 'object', properties: { a: { type: 'string', pattern: '(x)\\1' } } })!, /#\/properties\/a\/pattern.*backreference/);
  assert.match(schemaProblem({ type: 'object', patternProperties: { '^(?!_)': {} } })!, /patternProperties.*lookaround/);
  assert.match(schemaProblem({ type: 'string', pattern: 5 })!, /pattern must be a string/);
  assert.is(schemaProblem({ type: 'string', pattern: '^\\p{L}+$' }), undefined);
  assert.equal(compileArgumentSchema({ type: 'string', pattern: '^\\p{L}+$' })('héllo'), []);
  assert.is(schemaProblem({ type: 'string', pattern: '^[\\w.-]+@[\\w-]+\\.\\w+$' }), undefined);
  // One arriving past the check (e.g. from an MCP server) fails closed instead of throwing.
  const check = compileArgumentSchema({ type: 'string', pattern: '(x)\\1' });
  assert.equal(check('xx').map((i) => i.keyword), ['pattern']);
});

test('claw validate: every unusable pattern of a schema, with its path; data keywords are not schemas', () => {
  const issues = schemaPatternIssues(
    {
      type: 'object',
      properties: { a: { type: 'string', pattern: '(x)\\1' }, pattern: { type: 'string' }, ok: { pattern: '^[a-z]+$' } },
      patternProperties: { '^(?!_)': {} },
      items: [{ pattern: 'a(?<=b)' }],
      default: { pattern: '(?=x)' },
    },
    ['input_schema'],
  );
  assert.equal(
    issues.map((i) => i.path.join('/')),
    ['input_schema/properties/a/pattern', 'input_schema/patternProperties/^(?!_)', 'input_schema/items/0/pattern'],
  );
  assert.match(issues[0].message, /backreference/);
});

test.run();
