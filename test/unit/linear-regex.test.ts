import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { compileLinear, linearRegexProblem, LinearRegexError } from '../../src/policy/linear-regex.ts';

// Differential: the linear engine answers as the host's RegExp does on patterns both accept.
const CASES: [string, string, string[]][] = [
  ['.*password.*=.*', '', ['x password = 1', 'password', 'pass=word', 'PASSWORD=1', 'a\npassword=\n']],
  ['^rm\\s+-rf\\s+/$', '', ['rm -rf /', 'rm  -rf /', 'rm -rf /tmp', ' rm -rf /']],
  ['^a|b$', 'm', ['a', 'xb', 'x\na', 'b\nx', 'xx']],
  ['\\bfoo\\b', '', ['foo', 'a foo b', 'foobar', 'barfoo', '_foo']],
  ['\\Bfoo', '', ['foo', 'afoo', ' foo']],
  ['[^a-c]x', 'i', ['Ax', 'dx', 'ax', 'Dx']],
  ['[\\w-]+@[a-z.]{2,5}$', '', ['a-b@ex.com', '@x.co', 'ab@verylongdomain']],
  ['(?:ab){2,3}c', '', ['ababc', 'abc', 'abababababc', 'ababab']],
  ['(?<year>\\d{4})-(\\d\\d)', '', ['2024-01', '24-01', 'x12345-678']],
  ['colou?r', 'i', ['COLOR', 'colour', 'colr']],
  ['^.{2}$', 'u', ['ab', '😀a', '😀', 'abc']],
  ['^.{2}$', '', ['ab', '😀', '😀a']],
  ['a.b', 's', ['a\nb', 'axb']],
  ['a.b', '', ['a\nb', 'axb']],
  ['\\x41\\u0042\\t', '', ['AB\t', 'AB ']],
  ['(a*)*b', '', ['aaaab', 'aaaa', 'b']],
  ['(a|ab)(c|bcd)(d*)', '', ['abcd', 'acd', 'x']],
  ['^$', '', ['', 'a']],
  ['[\\s\\S]*x', '', ['abc', 'abcx']],
  ['[.$^]', '', ['a', '.', '$']],
  ['a{,2}', '', ['a{,2}', 'aa']],
  ['\\d+(\\.\\d+)*', '', ['v1.2.3', 'v', '10']],
  ['[^\\d\\s]', '', ['1 2', '1 a']],
  ['é', 'i', ['É', 'e']],
  ['^\\p{L}+$', 'u', ['héllo', 'ab1', 'Ωμέγα', '😀']],
  ['^[\\p{Lu}\\d]+$', 'u', ['AB12', 'Ab', '', 'ÉÜ9']],
  ['\\P{L}', 'u', ['abc', 'ab c', 'ÿ']],
  ['^[^\\p{N}]$', 'u', ['5', 'x', '٣']],
  ['\\p{Script=Greek}', 'u', ['abc', 'aβc']],
];

test('answers as the host RegExp does', () => {
  for (const [src, flags, inputs] of CASES) {
    const mine = compileLinear(src, flags);
    const host = new RegExp(src, flags);
    for (const s of inputs) assert.is(mine.test(s), host.test(s), `/${src}/${flags} on ${JSON.stringify(s)}`);
  }
});

test('random small patterns and inputs: same answers as the host RegExp', () => {
  let seed = 7;
  const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n);
  const atoms = ['a', 'b', '.', '[ab]', '[^a]', '\\b', '\\B', '^', '$', '\\s', '\\w', 'A'];
  const gen = (d: number): string => {
    const k = d > 2 ? rnd(3) : rnd(7);
    if (k < 3) return atoms[rnd(atoms.length)];
    if (k === 3) return gen(d + 1) + gen(d + 1);
    if (k === 4) return `(?:${gen(d + 1)}|${gen(d + 1)})`;
    const q = ['*', '+', '?', '{1,2}', '{2}', '*?'][rnd(6)];
    return `(${gen(d + 1)})${q}`;
  };
  for (let i = 0; i < 1000; i++) {
    const src = gen(0) + gen(0);
    const flags = ['', 'i', 'm', 's'][rnd(4)];
    const mine = compileLinear(src, flags);
    const host = new RegExp(src, flags);
    for (let j = 0; j < 12; j++) {
      let s = '';
      const n = rnd(7);
      for (let k = 0; k < n; k++) s += 'ab A\n'[rnd(5)];
      assert.is(mine.test(s), host.test(s), `/${src}/${flags} on ${JSON.stringify(s)}`);
    }
  }
});

test('patterns whose live states change at every character (the uncached path): same answers as the host', () => {
  let seed = 3;
  const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n);
  for (const src of ['a[ab]{40}c', '(?:^|b)a[ab]{30}(?:c|$)', '\\ba[ab ]{30}\\b', 'a[ab]{12}a[ab]{12}$', 'b[^c]{25}c']) {
    for (let j = 0; j < 6; j++) {
      let s = '';
      for (let k = 0; k < 4000; k++) s += 'ab c'[rnd(j < 3 ? 2 : 4)];
      for (const flags of ['', 'm']) assert.is(compileLinear(src, flags).test(s), new RegExp(src, flags).test(s), `/${src}/${flags} #${j}`);
    }
  }
});

test('refuses what needs backtracking, naming the construct', () => {
  assert.match(linearRegexProblem('(a)\\1')!, /backreference/);
  assert.match(linearRegexProblem('(?<n>a)\\k<n>')!, /backreference/);
  assert.match(linearRegexProblem('foo(?=bar)')!, /lookaround/);
  assert.match(linearRegexProblem('(?<!x)y')!, /lookaround/);
  assert.match(linearRegexProblem('a{1,100000}')!, /repetition/);
  assert.match(linearRegexProblem('(a{500}){500}')!, /too large/);
  assert.match(linearRegexProblem('(')!, /Invalid regular expression/);
  assert.throws(() => compileLinear('a(?=b)'), (e: unknown) => e instanceof LinearRegexError);
  assert.is(linearRegexProblem('.*password.*=.*'), undefined);
});

test('linear time: the spec example against 300 KB answers in well under a second', () => {
  const re = compileLinear('.*password.*=.*');
  const long = 'password '.repeat(34_000);
  const t0 = performance.now();
  assert.is(re.test(long), false);
  const nested = compileLinear('^(a+)+$');
  assert.is(nested.test('a'.repeat(100_000) + 'b'), false);
  assert.ok(performance.now() - t0 < 1500, `took ${performance.now() - t0} ms`);
});

test('compiled once per pattern and flags', () => {
  assert.is(compileLinear('abc'), compileLinear('abc'));
  assert.is.not(compileLinear('abc'), compileLinear('abc', 'i'));
});

test('case-insensitive matching is ECMAScript Canonicalize: toUpperCase without u, simple case folding with u', () => {
  // ſ (U+017F), the Kelvin sign (U+212A), dotless ı and İ: where toLowerCase/toUpperCase and Canonicalize disagree.
  const chars = ['a', 'k', 'K', 's', 'S', 'i', 'I', '\u017f', '\u212a', '\u0131', '\u0130', 'ß', '\u1e9e', 'é', 'É', '-', ' ', '_', '😀'];
  const patterns = ['k', 'K', '\u212a', 's', 'S', '\u017f', 'i', '\u0131', '\u0130', '[a-z]', '[^a-z]', '[\\w-]', '\\w', '\\W', '[k-s]', 'ß', '\\bk', 's\\b', '\\Bs'];
  for (const flags of ['i', 'iu', 'ims', 'imsu']) {
    for (const p of patterns) {
      const src = p;
      const lin = compileLinear(src, flags);
      const host = new RegExp(src, flags);
      for (const a of chars) for (const b of ['', ...chars]) {
        const text = a + b;
        assert.is(lin.test(text), host.test(text), `/${src}/${flags} on ${JSON.stringify(text)}`);
      }
    }
  }
});

test('the compile cache is bounded: argument strings compiled for format "regex" do not pile up', () => {
  const kept = compileLinear('kept-[a-z]+');
  const first = compileLinear('first-[a-z]+');
  for (let i = 0; i < 2000; i++) {
    compileLinear(`arg-${i}-[a-z]+`);
    if (i % 100 === 0) assert.is(compileLinear('kept-[a-z]+'), kept); // used recently: still cached
  }
  assert.is.not(compileLinear('first-[a-z]+'), first);
});

test.run();
