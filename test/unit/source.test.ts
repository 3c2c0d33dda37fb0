import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseSource, MAX_SOURCE_BYTES, MAX_SOURCE_DEPTH, type ParseResult } from '../../src/manifest/source.ts';

const enc = new TextEncoder();
const parse = (text: string | Uint8Array, file = 'claw.yaml') => parseSource(file, typeof text === 'string' ? enc.encode(text) : text);
const ok = (r: ParseResult) => {
  if (!r.ok) assert.unreachable(`expected ok, got ${JSON.stringify(r.issue)}`);
  return (r as Extract<ParseResult, { ok: true }>).source;
};
const bad = (r: ParseResult) => {
  if (r.ok) assert.unreachable('expected a failure');
  return (r as Extract<ParseResult, { ok: false }>).issue;
};

const YAML = `claw: "0.3.0"
kind: Claw
metadata:
  name: demo
spec:
  providers:
    - ./p.yaml
    - inline:
        model: x
  tools: [a, {b: 1}]
`;

test('limits', () => {
  assert.is(MAX_SOURCE_BYTES, 8 * 1024 * 1024);
  assert.is(MAX_SOURCE_DEPTH, 64);
});

test('YAML value and file name', () => {
  const s = ok(parse(YAML, 'dir/claw.yaml'));
  assert.is(s.file, 'dir/claw.yaml');
  assert.equal(s.value, {
    claw: '0.3.0',
    kind: 'Claw',
    metadata: { name: 'demo' },
    spec: { providers: ['./p.yaml', { inline: { model: 'x' } }], tools: ['a', { b: 1 }] },
  });
});

test('positions (1-based line/col) for nested paths', () => {
  const s = ok(parse(YAML));
  assert.equal(s.locate([]), { line: 1, col: 1 });
  assert.equal(s.locate(['kind']), { line: 2, col: 1 });
  assert.equal(s.locate(['metadata', 'name']), { line: 4, col: 3 });
  assert.equal(s.locate(['spec', 'providers', 0]), { line: 7, col: 7 });
  assert.equal(s.locate(['spec', 'providers', 1]), { line: 8, col: 7 });
  assert.equal(s.locate(['spec', 'providers', 1, 'inline', 'model']), { line: 9, col: 9 });
  assert.equal(s.locate(['spec', 'tools', 1]), { line: 10, col: 14 });
  assert.equal(s.locate(['spec', 'tools', 1, 'b']), { line: 10, col: 15 });
});

test('missing keys and indexes: the nearest existing ancestor', () => {
  const s = ok(parse(YAML));
  assert.equal(s.locate(['metadata', 'version']), { line: 3, col: 1 }, 'metadata');
  assert.equal(s.locate(['spec', 'missing', 'deeper']), { line: 5, col: 1 }, 'spec');
  assert.equal(s.locate(['spec', 'providers', 5]), { line: 6, col: 3 }, 'providers');
  assert.equal(s.locate(['spec', 'providers', 0, 'x']), { line: 7, col: 7 }, 'a scalar has no children');
  assert.equal(s.locate(['nope']), { line: 1, col: 1 }, 'the document');
});

test('JSON input works, with positions', () => {
  const s = ok(parse('{\n  "a": {\n    "b": [1, 2]\n  },\n  "c": "x"\n}\n', 'claw.json'));
  assert.equal(s.value, { a: { b: [1, 2] }, c: 'x' });
  assert.equal(s.locate(['a', 'b', 1]), { line: 3, col: 14 });
  assert.equal(s.locate(['c']), { line: 5, col: 3 });
  assert.equal(s.locate(['a', 'zzz']), { line: 2, col: 3 });
});

test('CRLF files: same positions', () => {
  const s = ok(parse('a: 1\r\nb:\r\n  c: 2\r\n'));
  assert.equal(s.value, { a: 1, b: { c: 2 } });
  assert.equal(s.locate(['b', 'c']), { line: 3, col: 3 });
});

test('a UTF-8 BOM is accepted and does not shift positions', () => {
  const s = ok(parse('\ufeffa: 1\nb: 2\n'));
  assert.equal(s.value, { a: 1, b: 2 });
  assert.equal(s.locate(['a']), { line: 1, col: 1 });
  assert.equal(s.locate(['b']), { line: 2, col: 1 });
  const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...enc.encode('{"x": 1}')]);
  assert.equal(ok(parse(bytes, 'm.json')).value, { x: 1 });
});

test('empty document and comment-only document → null value', () => {
  assert.is(ok(parse('')).value, null);
  assert.is(ok(parse('# nothing\n')).value, null);
});

test('YAML syntax error: rule syntax with a position', () => {
  const i = bad(parse('a: 1\nb: [1, 2\nc: 3\n'));
  assert.is(i.rule, 'syntax');
  assert.match(i.message, /^YAML syntax error: /);
  assert.ok(i.pos && i.pos.line >= 2, JSON.stringify(i.pos));
  assert.is(i.file, 'claw.yaml');
  const j = bad(parse('a:\n  b: 1\n   c: 2\n'));
  assert.is(j.rule, 'syntax');
  assert.equal(j.pos, { line: 2, col: 6 });
  assert.not.ok(j.message.includes('\n'), 'a one-line message');
});

test('duplicate keys are rejected (YAML and JSON), pointing at the duplicate', () => {
  const y = bad(parse('a: 1\nb: 2\na: 3\n'));
  assert.is(y.rule, 'syntax');
  assert.match(y.message, /unique/);
  assert.equal(y.pos, { line: 3, col: 1 });
  const j = bad(parse('{"a": 1, "a": 2}', 'm.json'));
  assert.is(j.rule, 'syntax');
  assert.equal(j.pos, { line: 1, col: 10 });
  const nested = bad(parse('spec:\n  x: 1\n  x: 2\n'));
  assert.equal(nested.pos, { line: 3, col: 3 });
});

test('NUL bytes → not-text', () => {
  const i = bad(parse(new Uint8Array([0x61, 0x3a, 0x20, 0x00, 0x0a])));
  assert.is(i.rule, 'not-text');
  assert.match(i.message, /NUL/);
});

test('invalid UTF-8 → not-text', () => {
  for (const bytes of [
    [0x61, 0x3a, 0x20, 0xc3, 0x28],
    [0xff, 0xfe, 0x61],
    [0x61, 0x3a, 0x20, 0xed, 0xa0, 0x80],
  ]) {
    assert.is(bad(parse(new Uint8Array(bytes))).rule, 'not-text', JSON.stringify(bytes));
  }
});

test('> 8 MiB → file-too-large (checked before anything else); exactly 8 MiB is read', () => {
  const big = new Uint8Array(MAX_SOURCE_BYTES + 1).fill(0x20);
  big[0] = 0; // even with NUL bytes, size wins
  const i = bad(parse(big));
  assert.is(i.rule, 'file-too-large');
  assert.match(i.message, /8388609 bytes/);
  const max = new Uint8Array(MAX_SOURCE_BYTES).fill(0x20);
  max.set(enc.encode('a: 1\n'));
  assert.equal(ok(parse(max)).value, { a: 1 });
});

test('100,000 nested [ → too-deep quickly', () => {
  const t = Date.now();
  assert.is(bad(parse('['.repeat(100_000))).rule, 'too-deep');
  assert.is(bad(parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`)).rule, 'too-deep');
  assert.is(bad(parse(`${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`, 'm.json')).rule, 'too-deep');
  assert.ok(Date.now() - t < 1000, `${Date.now() - t} ms`);
});

test('100,000 levels of "- - - …" → too-deep quickly', () => {
  const t = Date.now();
  assert.is(bad(parse(`${'- '.repeat(100_000)}x\n`)).rule, 'too-deep');
  assert.ok(Date.now() - t < 1000, `${Date.now() - t} ms`);
});

test('deep block indentation → too-deep, not a crash', () => {
  let s = '';
  for (let i = 0; i < 2000; i++) s += `${' '.repeat(i)}a:\n`;
  const t = Date.now();
  assert.is(bad(parse(s)).rule, 'too-deep');
  assert.ok(Date.now() - t < 1000, `${Date.now() - t} ms`);
  let q = '';
  for (let i = 0; i < 100; i++) q += `${' '.repeat(i * 2)}k${i}:\n`;
  assert.is(bad(parse(q)).rule, 'too-deep', '100 block levels > 64');
});

test('depth boundary: 64 levels accepted, 65 rejected', () => {
  assert.ok(parse(`${'['.repeat(64)}${']'.repeat(64)}`).ok);
  assert.is(bad(parse(`${'['.repeat(65)}${']'.repeat(65)}`)).rule, 'too-deep');
});

test('brackets inside quoted scalars are text, not nesting', () => {
  const deep = '['.repeat(100);
  assert.equal(ok(parse(`a: "x${deep}"\nb: 'y${deep}'\n`)).value, { a: `x${deep}`, b: `y${deep}` });
  assert.equal(ok(parse(`a: "q\\"${deep}"\n`)).value, { a: `q"${deep}` });
});

test('brackets inside a block scalar are text, not nesting (valid YAML is not rejected as too-deep)', () => {
  const lines = Array.from({ length: 70 }, (_, i) => `  step ${i}: type [ to open a list`).join('\n');
  const r = parse(`description: |\n${lines}\nname: x\n`);
  assert.ok(r.ok, r.ok ? '' : JSON.stringify((r as any).issue));
});

test('alias bombs are refused', () => {
  let s = 'a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n';
  for (let i = 1; i < 10; i++) s += `a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(', ')}]\n`;
  const t = Date.now();
  const r = parse(s);
  assert.not.ok(r.ok);
  assert.ok(Date.now() - t < 1000);
});

test('YAML beyond the plain subset (block scalars, anchors, multi-line flow): values and positions from the one reader', () => {
  const s = ok(parse('base: &p\n  model: m\nspec:\n  identity:\n    inline:\n      personality: |\n        line one\n        line two\n  providers: [*p,\n    {inline: {model: n}}]\n'));
  assert.equal(s.value, {
    base: { model: 'm' },
    spec: { identity: { inline: { personality: 'line one\nline two\n' } }, providers: [{ model: 'm' }, { inline: { model: 'n' } }] },
  });
  assert.equal(s.locate(['spec', 'identity', 'inline', 'personality']), { line: 6, col: 7 });
  assert.equal(s.locate(['spec', 'providers', 0]), { line: 9, col: 15 });
  assert.equal(s.locate(['spec', 'providers', 1, 'inline', 'model']), { line: 10, col: 15 });
});

test('YAML the reader refuses on purpose: rule syntax, "YAML not supported", with a position', () => {
  const i = bad(parse('a: 1\n? b\n: c\n'));
  assert.is(i.rule, 'syntax');
  assert.match(i.message, /^YAML not supported: explicit "\? " keys/);
  assert.equal(i.pos, { line: 2, col: 1 });
  const t = bad(parse('a: !!timestamp 2026-01-01\n'));
  assert.match(t.message, /^YAML not supported: unknown tag "!!timestamp"/);
  assert.equal(t.pos, { line: 1, col: 4 });
});

test.run();
