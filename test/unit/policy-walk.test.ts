import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { walkStrings } from '../../src/policy/walk.ts';

test('pre-order: an object\'s keys, then its values depth-first; owner keys and paths', () => {
  const seen: string[] = [];
  const out = walkStrings({ a: 'x', b: ['y', { c: 'z' }], 'odd key': 1, n: null }, (s) => {
    seen.push(`${s.where}:${s.text}@${s.path()}<${s.ownerKey ?? '-'}>`);
  });
  assert.is(out, 'done');
  assert.equal(seen, [
    'key:a@$.a<a>',
    'key:b@$.b<b>',
    'key:odd key@$["odd key"]<odd key>',
    'key:n@$.n<n>',
    'value:x@$.a<a>',
    'value:y@$.b[0]<b>',
    'key:c@$.b[1].c<c>',
    'value:z@$.b[1].c<c>',
  ]);
});

test('stop early, and limits', () => {
  let n = 0;
  assert.is(walkStrings(['a', 'b', 'c'], () => ++n < 2 ? undefined : false), 'stopped');
  assert.is(n, 2);
  assert.is(walkStrings(['a', 'b', 'c'], () => {}, { maxDepth: 10, maxNodes: 3 }), 'limit');
  assert.is(walkStrings([[['a']]], () => {}, { maxDepth: 2, maxNodes: 100 }), 'limit');
  assert.is(walkStrings([['a']], () => {}, { maxDepth: 2, maxNodes: 100 }), 'done');
});

test('paths escape control, bidi and non-ASCII characters and truncate long keys', () => {
  const paths: string[] = [];
  walkStrings({ ['a"\u202e\u00e9']: 1, ['k'.repeat(100)]: 1 }, (s) => void paths.push(s.path()));
  assert.equal(paths, ['$["a\\"\\u202e\\u00e9"]', `$["${'k'.repeat(64)}..."]`]);
});

test.run();
