// parseStrictJson (src/protocol/strict-json.ts): everything JSON.parse lets through is refused,
// with a code and a position; valid JSON parses to what JSON.parse gives.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseStrictJson, firstInvalidUtf8 } from '../../src/protocol/strict-json.ts';

const enc = (s: string) => new TextEncoder().encode(s);
const bytes = (...b: number[]) => new Uint8Array(b);

function failure(input: string | Uint8Array, limits = {}) {
  const r = parseStrictJson(input, limits);
  if (r.ok) throw new Error(`expected a failure for ${String(input)}`);
  return [r.code, r.pos];
}

test('valid JSON parses exactly like JSON.parse (string and byte input)', () => {
  const samples = [
    '{"a":1,"b":[true,false,null],"c":{"d":"e"}}',
    ' \t\r\n{"x" : -0.5e+3 , "y":[ ] ,"z":{}}\n',
    '"\\u00e9\\ud83d\\ude00 \\" \\\\ \\/ \\b\\f\\n\\r\\t"',
    '[0,-0,1.25,1E2,123456789012,"é😀"]',
    '{"__proto__":{"polluted":1},"constructor":2}',
    '3',
  ];
  for (const s of samples) {
    const a = parseStrictJson(s);
    const b = parseStrictJson(enc(s));
    assert.ok(a.ok && b.ok, s);
    assert.equal((a as any).value, JSON.parse(s), s);
    assert.equal((b as any).value, JSON.parse(s), s);
  }
});

test('"__proto__" is an own key, never the prototype', () => {
  const r = parseStrictJson('{"__proto__":{"polluted":1}}') as any;
  assert.equal(Object.keys(r.value), ['__proto__']);
  assert.equal(Object.getPrototypeOf(r.value), Object.prototype);
  assert.is(({} as any).polluted, undefined);
});

test('duplicate keys → duplicate_key at the second key (JSON.parse keeps the last)', () => {
  assert.equal(failure('{"a":1,"a":2}'), ['duplicate_key', 7]);
  assert.equal(failure('{"x":{"k":1,"k":1}}'), ['duplicate_key', 12]);
  // Equal after escape decoding counts as equal.
  assert.equal(failure('{"a":1,"\\u0061":2}'), ['duplicate_key', 7]);
  assert.equal(JSON.parse('{"a":1,"a":2}'), { a: 2 });
});

test('lone surrogates, raw and escaped → lone_surrogate (JSON.parse accepts both)', () => {
  assert.equal(failure('"\\ud800"'), ['lone_surrogate', 1]);
  assert.equal(failure('"\\udc00"'), ['lone_surrogate', 1]);
  assert.equal(failure('"\\ud800\\u0041"'), ['lone_surrogate', 1]);
  assert.equal(failure('"\\ud800x"'), ['lone_surrogate', 1]);
  assert.equal(failure('"a\ud800"'), ['lone_surrogate', 2]);
  assert.equal(failure('"\udc00b"'), ['lone_surrogate', 1]);
  assert.equal(failure('{"k\ud800":1}'), ['lone_surrogate', 3]);
  assert.ok(parseStrictJson('"\ud83d\ude00"').ok);
  assert.ok(typeof JSON.parse('"\\ud800"') === 'string');
});

test('byte-order mark → bom (string and bytes)', () => {
  assert.equal(failure('\ufeff{}'), ['bom', 0]);
  assert.equal(failure(bytes(0xef, 0xbb, 0xbf, 0x7b, 0x7d)), ['bom', 0]);
});

test('invalid UTF-8 → invalid_utf8 at the byte offset', () => {
  assert.equal(failure(bytes(0x22, 0x61, 0xff, 0x22)), ['invalid_utf8', 2]);
  assert.equal(failure(bytes(0x22, 0xc3, 0x22)), ['invalid_utf8', 1]); // truncated sequence
  assert.equal(failure(bytes(0x22, 0xc0, 0xaf, 0x22)), ['invalid_utf8', 1]); // overlong
  assert.equal(failure(bytes(0x22, 0xed, 0xa0, 0x80, 0x22)), ['invalid_utf8', 1]); // CESU surrogate
  assert.equal(failure(bytes(0x22, 0x61, 0xf4, 0x90, 0x80, 0x80, 0x22)), ['invalid_utf8', 2]); // > U+10FFFF
  assert.is(firstInvalidUtf8(enc('é😀ok')), enc('é😀ok').length);
});

test('size limit in UTF-8 bytes → too_large (string counted as UTF-8, not UTF-16)', () => {
  assert.ok(parseStrictJson('"' + 'a'.repeat(8) + '"', { maxBytes: 10 }).ok);
  assert.equal(failure('"' + 'a'.repeat(9) + '"', { maxBytes: 10 }), ['too_large', 10]);
  // 4 × "é" = 8 UTF-8 bytes + 2 quotes = 10: fits; 5 does not, though .length is only 7.
  assert.ok(parseStrictJson('"éééé"', { maxBytes: 10 }).ok);
  assert.equal(failure('"ééééé"', { maxBytes: 10 }), ['too_large', 10]);
  assert.equal(failure(enc('"ééééé"'), { maxBytes: 10 }), ['too_large', 10]);
  assert.equal(failure('{"a":"' + 'x'.repeat(70000) + '"}'), ['too_large', 65536]);
});

test('nesting depth: exactly maxDepth passes, one more → too_deep; 100,000 deep never throws', () => {
  assert.ok(parseStrictJson('[[[1]]]', { maxDepth: 3 }).ok);
  assert.equal(failure('[[[[1]]]]', { maxDepth: 3 }), ['too_deep', 3]);
  assert.equal(failure('{"a":{"b":{"c":{}}}}', { maxDepth: 3 }), ['too_deep', 15]);
  const deep = '['.repeat(100000) + ']'.repeat(100000);
  assert.equal(failure(deep, { maxBytes: 1e6 }), ['too_deep', 32]);
  assert.equal(failure(deep, { maxBytes: 1e6, maxDepth: 1e9 }), ['too_deep', 1000]); // clamped
  assert.ok(Array.isArray(JSON.parse(deep)));
});

test('trailing data, text around the value, empty input', () => {
  assert.equal(failure('{} {}'), ['trailing_data', 3]);
  assert.equal(failure('{"a":1}\nThanks!'), ['trailing_data', 8]);
  assert.equal(failure('Sure: {"a":1}'), ['syntax', 0]);
  assert.equal(failure(''), ['empty', 0]);
  assert.equal(failure(' \n\t '), ['empty', 4]);
  assert.equal(failure('{}\u00a0'), ['trailing_data', 2]); // NBSP is not JSON whitespace
});

test('grammar: numbers, literals, strings, escapes, commas', () => {
  const cases: [string, string, number][] = [
    ['01', 'bad_number', 0],
    ['-', 'bad_number', 0],
    ['1.', 'bad_number', 0],
    ['.5', 'syntax', 0],
    ['1e', 'bad_number', 0],
    ['+1', 'syntax', 0],
    ['NaN', 'syntax', 0],
    ['tru', 'syntax', 0],
    ['"abc', 'unterminated_string', 0],
    ['"a\nb"', 'control_char', 2],
    ['"\\x41"', 'bad_escape', 1],
    ['"\\u12G4"', 'bad_escape', 1],
    ['[1,]', 'syntax', 3],
    ['{"a":1,}', 'syntax', 7],
    ["{'a':1}", 'syntax', 1],
    ['{"a" 1}', 'syntax', 5],
    ['{"a":1 "b":2}', 'syntax', 7],
    ['[1 2]', 'syntax', 3],
    ['{a:1}', 'syntax', 1],
    ['/*c*/{}', 'syntax', 0],
  ];
  for (const [input, code, pos] of cases) assert.equal(failure(input), [code, pos], input);
});

test.run();
