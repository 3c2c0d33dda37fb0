// The YAML reader (src/yaml) on its own terms: what manifests write, the exact values and positions,
// the documented refusals (docs/manifest.md "YAML support") with their messages and positions, and
// hostile inputs. The differential proof against the `yaml` package is test/unit/fast-yaml.test.ts.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseYaml, type YamlResult } from '../../src/yaml/index.ts';
import { MAX_ALIAS_EXPANSION } from '../../src/yaml/compose.ts';
import { parseSource } from '../../src/manifest/source.ts';

type Ok = Extract<YamlResult, { ok: true }>;
type Err = Extract<YamlResult, { ok: false }>;

const ok = (text: string): Ok => {
  const r = parseYaml(text);
  if (!r.ok) assert.unreachable(`expected ok for ${JSON.stringify(text)}, got ${r.message} at ${r.pos.line}:${r.pos.col}`);
  return r as Ok;
};
const val = (text: string) => ok(text).value;
const err = (text: string): Err => {
  const r = parseYaml(text);
  if (r.ok) assert.unreachable(`expected an error for ${JSON.stringify(text)}, got ${JSON.stringify(r.value)}`);
  return r as Err;
};

test('block collections: nesting, compact "- a: 1", "- " at the parent key\'s indentation', () => {
  assert.equal(val('a:\n  b: 1\n  c:\n    - x\n    - y: 2\n      z: 3\n'), { a: { b: 1, c: ['x', { y: 2, z: 3 }] } });
  assert.equal(val('a:\n- x\n- y\nb: 1\n'), { a: ['x', 'y'], b: 1 });
  assert.equal(val('- - a\n  - b\n- - c\n'), [['a', 'b'], ['c']]);
  assert.equal(val('-\n  a: 1\n-\n- ~\n'), [{ a: 1 }, null, null]);
  assert.equal(val('a:\n  # comment\n\n  b: 1 # trailing\n'), { a: { b: 1 } });
  assert.equal(val('a: 1\r\nb:\r\n  - 2\r\n'), { a: 1, b: [2] });
});

test('flow collections over several lines, trailing comma, pairs in sequences, JSON-like keys', () => {
  assert.equal(val('a: [x,\n  y, {k: v,\n    j: [1, 2]},\n]\n'), { a: ['x', 'y', { k: 'v', j: [1, 2] }] });
  assert.equal(val('a: [k: v, w]\n'), { a: [{ k: 'v' }, 'w'] });
  assert.equal(val('a: {"k":1, b, c: }\n'), { a: { k: 1, b: null, c: null } });
  assert.equal(val('a: [b\n  c, d]\n'), { a: ['b c', 'd'] });
  assert.equal(val('a: {b:c}\n'), { a: { 'b:c': null } });
});

test('plain and quoted scalars: folding across lines and blank lines', () => {
  assert.equal(val('a: one\n  two\n\n  three\nb: x\n'), { a: 'one two\nthree', b: 'x' });
  assert.equal(val("a: 'it''s\n  folded\n\n\n  twice'\n"), { a: "it's folded\n\ntwice" });
  assert.equal(val('a: "x  \n   y\\\n   z"\n'), { a: 'x yz' });
  assert.equal(val('a: "trailing\\ \n  kept"\n'), { a: 'trailing  kept' });
});

test('every double-quoted escape, and invalid ones refused at the backslash', () => {
  const v = val('a: "\\0\\a\\b\\t\\\t\\n\\v\\f\\r\\e\\ \\"\\/\\\\\\N\\_\\L\\P\\x41\\u00e9\\U0001F600"\n') as { a: string };
  assert.is(v.a, '\0\x07\b\t\t\n\v\f\r\x1b "/\\\u0085\u00a0\u2028\u2029Aé😀');
  for (const [text, col] of [['a: "\\q"', 5], ['a: "x\\x4"', 6], ['a: "\\u12G4"', 5], ['a: "\\U00110000"', 5]] as const) {
    const e = err(`${text}\n`);
    assert.match(e.message, /escape/);
    assert.equal(e.pos, { line: 1, col }, text);
  }
});

test('block scalars: literal, folded, chomping, indentation indicators', () => {
  assert.equal(val('a: |\n  x\n   y\n\n  z\n\nb: 1\n'), { a: 'x\n y\n\nz\n', b: 1 });
  assert.equal(val('a: |-\n  x\n\n'), { a: 'x' });
  assert.equal(val('a: |+\n  x\n\n\n'), { a: 'x\n\n\n' });
  assert.equal(val('a: >\n  folded\n  text\n\n  para\n    more\n  end\n'), { a: 'folded text\npara\n  more\nend\n' });
  assert.equal(val('a: >-\n  x\n  y\n'), { a: 'x y' });
  assert.equal(val('a: |2\n    x\n  y\n'), { a: '  x\ny\n' });
  assert.equal(val('a: |1-\n  x\n'), { a: ' x' });
  assert.equal(val('- |\n  x\n- >+\n  y\n\n'), ['x\n', 'y\n\n']);
  assert.equal(val('a: | # comment\n  # not a comment\nb: 1\n'), { a: '# not a comment\n', b: 1 });
  assert.match(err('a: |\n    \n  x\n').message, /indentation indicator/);
  assert.match(err('a: |x\n  y\n').message, /block scalar header/);
});

test('anchors and aliases: the same value, key anchors, redefinition takes the latest', () => {
  const v = val('base: &b\n  model: m\n  auth: {type: none}\nproviders:\n  - *b\n  - *b\n') as { base: object; providers: object[] };
  assert.equal(v.providers, [{ model: 'm', auth: { type: 'none' } }, { model: 'm', auth: { type: 'none' } }]);
  assert.ok(v.providers[0] === v.base, 'an alias shares its anchor\'s value (as yaml does)');
  assert.equal(val('&k name: x\nother: *k\n'), { name: 'x', other: 'name' });
  assert.equal(val('a: &x 1\nb: &x 2\nc: *x\n'), { a: 1, b: 2, c: 2 });
  assert.equal(val('a: &x [&x 1]\nb: *x\n'), { a: [1], b: 1 });
});

test('core tags and the non-specific tag', () => {
  assert.equal(val('a: !!str 1\nb: !!int "12"\nc: !!float 1.5\nd: !!bool "true"\ne: !!null ""\nf: ! 12\ng: !!map {x: 1}\nh: !!seq [1]\ni: !<tag:yaml.org,2002:str> 2\nj: !!str\n'), {
    a: '1', b: 12, c: 1.5, d: true, e: null, f: '12', g: { x: 1 }, h: [1], i: '2', j: '',
  });
});

test('core schema typing, exactly as yaml 1.2 core', () => {
  const v = val('- ~\n- null\n- NULL\n- True\n- FALSE\n- yes\n- 0o17\n- 0x1F\n- 012\n- -0\n- +12\n- 1.\n- .5\n- 1e3\n- -.inf\n- .NaN\n- 1_000\n- 0b1\n- 2026-01-01\n') as unknown[];
  const want = [null, null, null, true, false, 'yes', 15, 31, 12, -0, 12, 1, 0.5, 1000, -Infinity, NaN, '1_000', '0b1', '2026-01-01'];
  assert.is(v.length, want.length);
  want.forEach((w, i) => assert.ok(Object.is(v[i], w), `item ${i}: ${String(v[i])} vs ${String(w)}`));
});

test('documents: ---, ..., %YAML 1.2, empty; several documents are an error', () => {
  assert.equal(val('%YAML 1.2\n---\na: 1\n...\n# end\n'), { a: 1 });
  assert.equal(val('--- |\n  text\n'), 'text\n');
  assert.is(val(''), null);
  assert.is(val('# only\n'), null);
  assert.is(val('---\n'), null);
  const e = err('a: 1\n---\nb: 2\n');
  assert.match(e.message, /several YAML documents/);
  assert.equal(e.pos, { line: 2, col: 1 });
});

test('locate: keys, items, block scalars, flow, aliases (not followed), numeric keys by property name', () => {
  const r = ok('a:\n  - x\n  - k: |\n      text\n    j: [1, {m: 2}]\n  - *z\nz: &z 3\n'.replace('  - *z\n', '  - &z q\n  - *z\n'));
  assert.equal(r.locate([]), { line: 1, col: 1 });
  assert.equal(r.locate(['a', 1, 'k']), { line: 3, col: 5 });
  assert.equal(r.locate(['a', 1, 'j', 1, 'm']), { line: 5, col: 13 });
  assert.equal(r.locate(['a', 2]), { line: 6, col: 8 });
  assert.equal(r.locate(['a', 3, 'deeper']), { line: 7, col: 5 });
  assert.equal(r.locate(['a', 1, 'nope']), { line: 3, col: 5 });
  assert.equal(ok('1: a\ntrue: b\n').locate(['true']), { line: 2, col: 1 });
});

test('errors: one message with a 1-based line and column', () => {
  const cases: [string, RegExp, number, number][] = [
    ['a:\n  b: 1\n   c: 2\n', /single line/, 2, 6],
    ['a: 1\na: 2\n', /unique/, 2, 1],
    ['a: [1, 2\nb: 3\n', /flow collection continues|expected "," or "\]"/, 2, 1],
    ['a: "open\n', /not closed/, 1, 4],
    ['a: b: c\n', /same line as its key/, 1, 4],
    ['a:\n  - x\n - y\n', /indentation/, 3, 2],
    ['\ta: 1\n', /tabs/, 1, 1],
    ['a: 1\n- b\n', /sequence entry/, 2, 1],
    ['a: *nope\n', /unknown anchor/, 1, 4],
    ['a: |\n    x\n  y\n', /less indented/, 3, 3],
  ];
  for (const [text, re, line, col] of cases) {
    const e = err(text);
    assert.match(e.message, re, text);
    assert.equal(e.pos, { line, col }, `${JSON.stringify(text)}: ${e.message}`);
    assert.not.ok(e.message.includes('\n'));
  }
});

test('refused on purpose (docs/manifest.md "YAML support"): yaml accepts these, we say why', () => {
  const cases: [string, RegExp, 'syntax' | 'unsupported'][] = [
    ['? a\n: b\n', /explicit "\? " keys are not supported/, 'unsupported'],
    ['a: {? b: c}\n', /explicit "\? " keys/, 'unsupported'],
    ['[a]: b\n', /collections as mapping keys/, 'unsupported'],
    ['a: &k x\n*k : y\n', /aliases as mapping keys/, 'unsupported'],
    ['a: {: b}\n', /empty mapping keys/, 'unsupported'],
    ['1: a\n"1": b\n', /unique: "1"/, 'syntax'],
    ['a: !foo x\n', /unknown tag "!foo"/, 'unsupported'],
    ['a: !!binary aGk=\n', /unknown tag "!!binary"/, 'unsupported'],
    ['a: !!int abc\n', /not a valid !!int/, 'syntax'],
    ['a: !!float 1\n', /not a valid !!float/, 'syntax'],
    ['a: !!str [x]\n', /cannot have the tag !!str/, 'syntax'],
    ['%YAML 1.1\n---\na: yes\n', /YAML versions other than 1.2/, 'unsupported'],
    ['%TAG ! tag:x,2000:\n---\na: 1\n', /directives other than %YAML 1.2/, 'unsupported'],
    ['a: &x [*x]\n', /recursive aliases/, 'unsupported'],
    ['a: 1\rb: 2\n', /carriage return/, 'syntax'],
    ['a: "x\\\n\n  y"\n', /escaped line break/, 'syntax'],
    ['"ab\\"', /not closed/, 'syntax'],
    ["- '''", /not closed/, 'syntax'],
    ['\tx\n', /tabs are not allowed as indentation/, 'syntax'],
  ];
  for (const [text, re, kind] of cases) {
    const e = err(text);
    assert.match(e.message, re, `${JSON.stringify(text)}: ${e.message}`);
    assert.is(e.kind, kind, text);
  }
  // Through parseSource: rule syntax, prefixed so the reader knows it is a limit, not a typo.
  const s = parseSource('claw.yaml', new TextEncoder().encode('? a\n: b\n'));
  assert.ok(!s.ok && s.issue.rule === 'syntax' && s.issue.message.startsWith('YAML not supported: '), JSON.stringify(s));
  assert.equal(!s.ok && s.issue.pos, { line: 1, col: 1 });
});

test('alias caps: billion laughs (yaml\'s count) and expansion of empty collections (ours)', () => {
  let laughs = 'a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n';
  for (let i = 1; i < 10; i++) laughs += `a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(', ')}]\n`;
  const t = Date.now();
  const e = err(laughs);
  assert.is(e.kind, 'alias-limit');
  assert.match(e.message, /billion laughs/);
  const empties = `e: &e []\na: &a [${Array(1000).fill('*e').join(',')}]\nb: &b [${Array(1000).fill('*a').join(',')}]\nc: [${Array(1000).fill('*b').join(',')}]\n`;
  const f = err(empties);
  assert.is(f.kind, 'alias-limit');
  assert.match(f.message, new RegExp(`more than ${MAX_ALIAS_EXPANSION} nodes`));
  assert.ok(Date.now() - t < 2000, `${Date.now() - t} ms`);
  // Normal reuse is fine: 50 aliases of a 20-node block.
  const block = `base: &b {${Array.from({ length: 10 }, (_, i) => `k${i}: v`).join(', ')}}\n`;
  const reuse = val(`${block}list: [${Array(50).fill('*b').join(', ')}]\n`) as { list: unknown[] };
  assert.is(reuse.list.length, 50);
});

test('hostile inputs: one error or a value, never a throw or a hang', () => {
  const t = Date.now();
  const inputs = [
    Array.from({ length: 3000 }, (_, i) => `${' '.repeat(i)}a:`).join('\n'),
    '['.repeat(5000),
    '- '.repeat(5000) + 'x',
    `"${'x '.repeat(1_000_000)}`,
    `a: |\n${'\n'.repeat(1_000_000)}  x\n`,
    Array.from({ length: 100_000 }, (_, i) => `k${i}: ${i}`).join('\n'),
    `a: ${'x '.repeat(1_000_000)}`,
  ];
  for (const text of inputs) {
    const r = parseYaml(text);
    if (!r.ok) assert.ok(r.pos.line >= 1 && r.pos.col >= 1 && r.message.length > 0);
  }
  assert.is(err('['.repeat(5000)).kind, 'too-deep');
  // Random bytes (as text): never a throw.
  let seed = 7;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
  for (let k = 0; k < 2000; k++) {
    const len = 1 + Math.floor(rnd() * 200);
    let s = '';
    for (let i = 0; i < len; i++) s += String.fromCharCode(rnd() < 0.7 ? 32 + Math.floor(rnd() * 95) : [9, 10, 13, 0x85, 0x2028, 0xfeff, 0xd800][Math.floor(rnd() * 7)]);
    const r = parseYaml(s);
    assert.type(r.ok, 'boolean');
  }
  assert.ok(Date.now() - t < 20_000, `${Date.now() - t} ms`);
});

test('block scalar with an indentation indicator: trailing spaces-only lines read as yaml reads them', () => {
  // Measured against the `yaml` package: no deeper than the first content line → blank; deeper → content.
  assert.equal(val('x: |1\n    a\n    \n'), { x: '   a\n' });
  assert.equal(val('x: |1\n    a\n     \n'), { x: '   a\n    \n' });
  assert.equal(val('x: |1\n    a\n   \n    b\n'), { x: '   a\n  \n   b\n' });
  assert.equal(val('x: >1\n    x :x\n  '), { x: '   x :x\n' });
  assert.equal(val('x: |\n  a\n   \n'), { x: 'a\n \n' });
});

test('JSON text with tabs before the value still has positions', () => {
  const r = parseSource('m.json', new TextEncoder().encode('\t{"a":\t[1]}'));
  assert.ok(r.ok);
  if (r.ok) {
    assert.equal(r.source.locate([]), { line: 1, col: 2 });
    assert.equal(r.source.locate(['a', 0]), { line: 1, col: 9 });
  }
});

test.run();
