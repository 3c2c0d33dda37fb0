import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { hostAllowed, normalizeHost } from '../../src/net/host-allowlist.ts';

const LIST = ['api.example.com', '*.googleapis.com', 'Mixed.Case.ORG.', '127.0.0.1', '::1', '[2001:db8::5]', 'bücher.example'];

// [host, allowed by LIST]
const TABLE: [string, boolean][] = [
  // exact
  ['api.example.com', true],
  ['API.EXAMPLE.COM', true],
  ['api.example.com.', true],
  ['example.com', false],
  ['x.api.example.com', false], // exact entries do not cover subdomains
  ['api.example.com.evil.com', false],
  ['evilapi.example.com', false],
  ['api-example.com', false],
  // wildcard: any depth, never the apex
  ['storage.googleapis.com', true],
  ['a.b.c.googleapis.com', true],
  ['STORAGE.GoogleApis.com.', true],
  ['googleapis.com', false],
  ['googleapis.com.', false],
  ['evilgoogleapis.com', false],
  ['googleapis.com.evil.com', false],
  // case/trailing dot on the entry side
  ['mixed.case.org', true],
  // IP literals: only when listed, canonical comparison
  ['127.0.0.1', true],
  ['127.0.0.2', false],
  ['::1', true],
  ['[::1]', true],
  ['0:0:0:0:0:0:0:1', true],
  ['2001:db8::5', true],
  ['[2001:db8:0:0:0:0:0:5]', true],
  ['2001:db8::6', false],
  ['::ffff:127.0.0.1', false], // a different address (mapped), not listed
  // IDN: entries are compared in A-label form, as new URL() hands hosts over
  ['xn--bcher-kva.example', true],
  ['bücher.example', true],
  // junk
  ['', false],
  ['.', false],
];

for (const [host, want] of TABLE) {
  test(`hostAllowed ${JSON.stringify(host)} → ${want}`, () => {
    assert.is(hostAllowed(host, LIST), want);
  });
}

test('wildcards never match IP literals', () => {
  assert.is(hostAllowed('10.0.0.1', ['*.0.0.1']), false);
  assert.is(hostAllowed('10.0.0.1', ['*.0.1']), false);
  assert.is(hostAllowed('127.0.0.1', ['*']), false);
  assert.is(hostAllowed('::1', ['*.1']), false);
});

test('only a leading "*." label is a wildcard', () => {
  assert.is(hostAllowed('anything.com', ['*']), false);
  assert.is(hostAllowed('a.example.com', ['a.*.com']), false);
  assert.is(hostAllowed('xexample.com', ['*example.com']), false);
  assert.is(hostAllowed('a.example.com', ['*.*.com']), false);
  assert.is(hostAllowed('example.com', ['*.']), false);
});

test('entries are bare host names: scheme, port or path never match', () => {
  assert.is(hostAllowed('api.example.com', ['https://api.example.com']), false);
  assert.is(hostAllowed('api.example.com', ['api.example.com:443']), false);
  assert.is(hostAllowed('api.example.com', ['api.example.com/v1']), false);
  assert.is(hostAllowed('api.example.com', [' api.example.com ']), true); // surrounding blanks are ignored
});

test('empty or missing list allows nothing', () => {
  assert.is(hostAllowed('api.example.com', []), false);
  assert.is(hostAllowed('api.example.com', undefined), false);
});

test('normalizeHost', () => {
  assert.is(normalizeHost('[::1]'), '::1');
  assert.is(normalizeHost('Example.COM.'), 'example.com');
  assert.is(normalizeHost('Bücher.example'), 'xn--bcher-kva.example');
});

test.run();
