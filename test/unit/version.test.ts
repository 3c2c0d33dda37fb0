import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { negotiateVersion, SUPPORTED_PROTOCOL_VERSIONS } from '../../src/kernel/version.ts';

const TABLE: [string, string | undefined][] = [
  ['0.3.0', '0.3.0'],
  ['0.3.9', '0.3.0'],
  ['0.3.10', '0.3.0'],
  ['0.9.0', '0.3.0'],
  ['0.10.0', '0.3.0'],
  ['0.3.1-beta', '0.3.0'],
  ['0.2.0', '0.2.0'],
  ['0.2.7', '0.2.0'],
  ['0.2.99', '0.2.0'],
  ['0.3.0-rc.1', '0.2.0'], // a pre-release sorts before its release
  ['0.3.0-0', '0.2.0'],
  ['0.2.0-rc.1', undefined],
  ['0.1.0', undefined],
  ['0.1.99', undefined],
  ['0.0.1', undefined],
  ['1.0.0', undefined],
  ['9.0.0', undefined],
  ['garbage', undefined],
  ['', undefined],
  ['0.3', undefined],
  ['v0.3.0', undefined],
  ['0.3.0.1', undefined],
  [' 0.3.0', undefined],
  ['0.x.0', undefined],
];

for (const [req, want] of TABLE) {
  test(`negotiateVersion(${JSON.stringify(req)}) → ${want}`, () => {
    assert.is(negotiateVersion(req), want);
  });
}

test('the reply is never above the request (spec §9.3.1 MUST)', () => {
  for (const [req, got] of TABLE) {
    if (!got) continue;
    const n = (v: string) => v.split(/[.-]/).slice(0, 3).map(Number);
    const [a, b, c] = n(got);
    const [x, y, z] = n(req);
    assert.ok(a < x || (a === x && (b < y || (b === y && c <= z))), `${got} <= ${req}`);
  }
});

test('supported versions, highest first', () => {
  assert.equal([...SUPPORTED_PROTOCOL_VERSIONS], ['0.3.0', '0.2.0']);
});

test.run();
