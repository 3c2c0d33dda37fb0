// The depth a JSON text's brackets give (src/protocol/depth.ts textDepth, read before parsing) is the depth of the
// value JSON.parse makes of it, for any valid text: the router refuses a too-deep message on the text alone.
// Checked on random values whose strings are full of brackets, quotes and escapes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { exceedsDepth, textDepth, textNestsDeeperThan } from '../../src/protocol/depth.ts';

/** Depth as exceedsDepth counts it: the smallest max it does not exceed. */
function valueDepth(v: unknown): number {
  let d = 0;
  while (exceedsDepth(v, d)) d++;
  return d;
}

let seed = 0x2545f491;
const rand = (n: number) => {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) % n;
};
const NASTY = ['[', ']', '{', '}', '"', '\\', '\\"', '\\\\', ',', ':', 'a', '\u2028', '\ud83d\ude00'];
const str = () => Array.from({ length: rand(6) }, () => NASTY[rand(NASTY.length)]).join('');
function value(depthLeft: number): unknown {
  const k = depthLeft <= 0 ? rand(4) : rand(7);
  if (k === 0) return str();
  if (k === 1) return rand(1000) - 500;
  if (k === 2) return [true, false, null][rand(3)];
  if (k === 3) return rand(2) ? [] : {};
  if (k <= 4) return Array.from({ length: 1 + rand(3) }, () => value(depthLeft - 1));
  return Object.fromEntries(Array.from({ length: 1 + rand(3) }, () => [str(), value(depthLeft - 1)]));
}

test('textDepth of JSON.stringify(v) is the depth of v, for 3,000 random values', () => {
  for (let i = 0; i < 3000; i++) {
    const v = value(1 + rand(12));
    const text = JSON.stringify(v, null, rand(2) ? 1 : undefined);
    const want = valueDepth(v);
    assert.is(textDepth(text, 1000), want, text);
    for (const max of [want - 1, want, want + 1]) if (max >= 0) assert.is(textNestsDeeperThan(text, max), exceedsDepth(v, max) && text.length > 2 * max, `${text} at ${max}`);
  }
});

test('textDepth stops counting past its cap', () => {
  assert.is(textDepth('['.repeat(100) + ']'.repeat(100), 10), 11);
  assert.is(textDepth('"[[[["', 1), 0);
  assert.is(textDepth('[1,[2,[3]],{"a":{}}]', 50), 3);
});

test.run();
