// Differential proof for the manifest reader (src/yaml + src/manifest/source.ts) against the `yaml`
// package, which stays a devDependency only as this oracle:
//   for every input, parseSource and `yaml` (parseDocument + toJS, uniqueKeys, maxAliasCount 100)
//   either both reject, or both accept with exactly the same value (same keys in the same order,
//   Object.is on numbers: -0, NaN, ±Infinity) and the same locate() answer for every path.
// Deliberate differences (docs/manifest.md "YAML support") are recognised by `deliberate()` below and
// must go our stricter way: we reject, `yaml` accepts. Anything else is a failure.
// Inputs: every YAML/JSON file under test/fixtures, examples/ and /work/shared (each document of the
// multi-document files on its own too), hand-picked edge cases, thousands of generated documents
// in many styles (block/flow, folding, block scalars, anchors, tags) and random mutations of all of these.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isMap, isSeq, isScalar, isPair, visit, Parser, LineCounter, parseDocument, parseAllDocuments, type Node, type Document } from 'yaml';
import { resolvePlain } from '../../src/yaml/scalars.ts';
import { parseJsonText } from '../../src/yaml/json.ts';
import { flowDepth, parseSource, MAX_SOURCE_BYTES, MAX_SOURCE_DEPTH, type ParseResult } from '../../src/manifest/source.ts';
import { exceedsDepth } from '../../src/protocol/depth.ts';
import type { PathSegment, SourcePosition } from '../../src/manifest/issues.ts';
import { seededRandom } from '../helpers/rng.ts';

const ROOT = process.cwd().replace(/\/?$/, '/');
const enc = new TextEncoder();

// ---------- helpers ----------

/** Exact structural equality: Object.is on primitives, same own keys in the same order, same prototypes. */
function same(a: unknown, b: unknown, path = '$', seen = new Set<unknown>()): string | undefined {
  if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null) {
    return Object.is(a, b) ? undefined : `${path}: ${fmt(a)} !== ${fmt(b)}`;
  }
  if (seen.has(a)) return undefined; // shared (aliased) values: compared once
  seen.add(a);
  if (Array.isArray(a) !== Array.isArray(b)) return `${path}: array vs object`;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return `${path}: different prototypes`;
  const ka = Reflect.ownKeys(a);
  const kb = Reflect.ownKeys(b);
  if (ka.length !== kb.length || ka.some((k, i) => k !== kb[i])) return `${path}: keys ${fmt(ka.map(String))} vs ${fmt(kb.map(String))}`;
  for (const k of ka) {
    const da = Object.getOwnPropertyDescriptor(a, k)!;
    const db = Object.getOwnPropertyDescriptor(b, k)!;
    if (da.enumerable !== db.enumerable || da.writable !== db.writable) return `${path}.${String(k)}: descriptors differ`;
    const d = same(da.value, db.value, `${path}.${String(k)}`, seen);
    if (d) return d;
  }
  return undefined;
}
const fmt = (x: unknown) => (typeof x === 'number' ? (Object.is(x, -0) ? '-0' : String(x)) : JSON.stringify(x));

/** True when the value contains itself (a recursive alias, which `yaml` builds and we refuse). */
function cyclic(v: unknown, stack = new Set<unknown>()): boolean {
  if (typeof v !== 'object' || v === null) return false;
  if (stack.has(v)) return true;
  stack.add(v);
  for (const x of Object.values(v)) if (cyclic(x, stack)) return true;
  stack.delete(v);
  return false;
}

/**
 * Why we deliberately reject a document `yaml` accepts (docs/manifest.md "YAML support"), or
 * undefined. Each reason is a rule of the docs, checked on `yaml`'s own reading of the text.
 */
function deliberate(text: string, doc: Document.Parsed, value: unknown): string | undefined {
  if (/\r(?!\n)/.test(text)) return 'a CR not followed by LF';
  if (doc.warnings.length > 0) return 'yaml warns (unknown tag, tag that does not fit the value, unknown directive)';
  let why: string | undefined;
  const CORE = new Set(['str', 'int', 'float', 'bool', 'null', 'map', 'seq'].map((t) => `tag:yaml.org,2002:${t}`));
  visit(doc, {
    Node(_k, node) {
      if (node.tag && node.tag !== '!' && !CORE.has(node.tag)) why ??= `a tag outside the core schema (${node.tag})`;
    },
    Map(_k, map) {
      const names = new Set<string>();
      for (const pair of map.items) {
        const key = pair.key as Node | null;
        if (key && !isScalar(key)) why ??= 'a non-scalar or alias key';
        const name = isScalar(key) ? (key.value === null ? '' : String(key.value)) : String(key);
        if (names.has(name)) why ??= 'keys that are different YAML values but the same JS property name (1 and "1")';
        names.add(name);
        // An empty key, a tag alone included (`{ ! }`: yaml reads a key '' with an empty range).
        if (key === null || (isScalar(key) && key.range && key.range[0] === key.range[1] && (key.value === null || key.value === ''))) why ??= 'an empty key';
      }
    },
    Seq(_k, seq) {
      for (const it of seq.items) {
        if (isPair(it)) {
          const key = it.key as Node | null;
          if (key && !isScalar(key)) why ??= 'a non-scalar or alias key';
          if (key === null || (isScalar(key) && key.range && key.range[0] === key.range[1])) why ??= 'an empty key';
        }
      }
    },
  });
  if (why) return why;
  if (cyclic(value)) return 'a recursive alias';
  // Tokens as yaml's own CST parser types them (the lexer alone cannot tell a quote from block scalar text).
  let tokenWhy: string | undefined;
  const walk = (tok: any): void => {
    if (!tok || tokenWhy) return;
    if (tok.type === 'explicit-key-ind') tokenWhy = 'an explicit "? " key';
    const src: string = tok.source ?? '';
    if (tok.type === 'double-quoted-scalar') {
      if (!/(^|[^\\])(\\\\)*"$/.test(src.slice(1))) tokenWhy = 'an unclosed quoted string at the end of the file (ending in \\" or \'\')';
      else if (/(^|[^\\])(\\\\)*\\\r?\n[ \t]*\r?\n/.test(src)) tokenWhy = 'an escaped line break followed by a blank line';
    }
    if (tok.type === 'single-quoted-scalar' && !/^(?:[^']|'')*'$/.test(src.slice(1))) tokenWhy = 'an unclosed quoted string at the end of the file (ending in \\" or \'\')';
    const list = (x: unknown): any[] => (Array.isArray(x) ? x : x ? [x] : []);
    for (const t of [...list(tok.start), ...list(tok.props), ...list(tok.sep)]) walk(t);
    if (tok.items) for (const it of tok.items) for (const t of [...list(it.start), it.key, ...list(it.sep), it.value]) walk(t);
    walk(tok.key);
    walk(tok.value);
  };
  for (const top of new Parser().parse(text)) {
    if (top.type === 'directive' && top.source.replace(/\s+#.*$/, '').trimEnd() !== '%YAML 1.2') return 'a directive other than %YAML 1.2';
    walk(top);
    if (tokenWhy) return tokenWhy;
  }
  return undefined;
}

/**
 * The reference: what parseSource answered before this reader existed (the `yaml` package with the
 * same pre-checks and depth limit), plus `deliberate` when the document is one we refuse on purpose.
 */
function referenceParse(file: string, bytes: Uint8Array): ParseResult & { deliberate?: string; yamlErrorLine?: number } {
  const fail = (message: string, rule: string, pos?: SourcePosition) => ({ ok: false as const, issue: { file, segments: [], message, rule, pos } });
  if (bytes.length > MAX_SOURCE_BYTES) return fail(`file is ${bytes.length} bytes; manifests are limited to ${MAX_SOURCE_BYTES} bytes`, 'file-too-large');
  if (bytes.includes(0)) return fail('file is binary (contains NUL bytes), expected YAML or JSON text', 'not-text');
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return fail('file is not valid UTF-8 text, expected YAML or JSON', 'not-text');
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (flowDepth(text) > MAX_SOURCE_DEPTH) return fail(`document nests deeper than ${MAX_SOURCE_DEPTH} levels`, 'too-deep');
  const lc = new LineCounter();
  let doc: Document.Parsed;
  try {
    doc = parseDocument(text, { lineCounter: lc, uniqueKeys: true, prettyErrors: false });
  } catch (e) {
    return fail(e instanceof RangeError ? 'document nests too deeply to parse' : `cannot parse: ${(e as Error).message}`, e instanceof RangeError ? 'too-deep' : 'syntax');
  }
  const toPos = (offset: number): SourcePosition => {
    const p = lc.linePos(offset);
    return { line: p.line, col: p.col };
  };
  if (doc.errors.length > 0) {
    const e = doc.errors[0];
    const msg = e.message.split('\n')[0];
    if (/call stack/i.test(msg)) return fail('document nests too deeply to parse', 'too-deep');
    return { ...fail(`YAML syntax error: ${msg}`, 'syntax', toPos(e.pos[0])), yamlErrorLine: toPos(e.pos[0]).line };
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    const msg = e instanceof RangeError ? 'document nests too deeply to read' : (e as Error).message;
    return fail(msg, e instanceof RangeError ? 'too-deep' : 'syntax');
  }
  const why = deliberate(text, doc, value);
  if (!why && exceedsDepth(value, MAX_SOURCE_DEPTH)) return fail(`document nests deeper than ${MAX_SOURCE_DEPTH} levels`, 'too-deep');
  const locate = (segments: readonly PathSegment[]): SourcePosition | undefined => {
    let node: Node | null | undefined = doc.contents as Node | null;
    let best: SourcePosition | undefined = node?.range ? toPos(node.range[0]) : undefined;
    for (const seg of segments) {
      if (isMap(node)) {
        // Keys are found by their JS property name (`1:` at "1"), as the reader does; `yaml` compares typed values.
        const pair = node.items.find((it) => isScalar(it.key) && (it.key.value === null ? '' : String(it.key.value)) === seg);
        if (!pair) break;
        const keyNode = pair.key as Node | null;
        if (keyNode?.range) best = toPos(keyNode.range[0]);
        node = pair.value as Node | null;
      } else if (isSeq(node) && typeof seg === 'number') {
        const item = node.items[seg] as Node | undefined;
        if (!item) break;
        if (item.range) best = toPos(item.range[0]);
        node = item;
      } else break;
    }
    return best;
  };
  return { ok: true, source: { file, value, locate }, deliberate: why };
}

/** Paths into a value (each prefix, plus a missing key and index at each level), to compare locate(). */
function paths(v: unknown, prefix: PathSegment[] = [], out: PathSegment[][] = [], budget = { n: 30 }): PathSegment[][] {
  if (budget.n-- <= 0) return out;
  out.push(prefix);
  if (Array.isArray(v)) {
    v.forEach((x, i) => paths(x, [...prefix, i], out, budget));
    out.push([...prefix, v.length]);
  } else if (v && typeof v === 'object') {
    for (const k of Object.keys(v)) paths((v as Record<string, unknown>)[k], [...prefix, k], out, budget);
    out.push([...prefix, 'no-such-key']);
  }
  return out;
}

/** FAST_YAML_FUZZ=20 node scripts/test.mjs unit fast-yaml: 20× the generated documents and mutations, other seeds. */
const SCALE = Math.max(1, Number(process.env.FAST_YAML_FUZZ) || 1);
/** FAST_YAML_SEED=n: another family of seeds (n × 10,000 added to every seed). */
const SEED = (Number(process.env.FAST_YAML_SEED) || 0) * 10_000;

const stats = { checked: 0, accepted: 0, rejected: 0, json: 0, deliberate: new Map<string, number>(), errorLines: 0, errorLinesSame: 0, errorLinesNear: 0 };

/** Both readers on one text; a description of the first difference, or undefined. */
function check(text: string, label: string): string | undefined {
  stats.checked++;
  const file = label.endsWith('.json') ? 'm.json' : 'm.yaml';
  const bytes = enc.encode(text);
  let got: ParseResult;
  try {
    got = parseSource(file, bytes);
  } catch (e) {
    return `${label}: parseSource threw ${(e as Error).stack}\n${text}`;
  }
  const ref = referenceParse(file, bytes);
  if (parseJsonText(text)) stats.json++;
  if (ref.ok && ref.deliberate) {
    stats.deliberate.set(ref.deliberate, (stats.deliberate.get(ref.deliberate) ?? 0) + 1);
    return got.ok ? `${label}: accepted a document we refuse on purpose (${ref.deliberate}):\n${text}` : undefined;
  }
  if (!got.ok && ref.ok && got.issue.message.includes('tabs are not allowed as indentation') && /^ *\t/m.test(text)) {
    const why = 'a tab in the indentation before content';
    stats.deliberate.set(why, (stats.deliberate.get(why) ?? 0) + 1);
    return undefined;
  }
  if (got.ok !== ref.ok) return `${label}: ours ok=${got.ok}, yaml ok=${ref.ok}: ${JSON.stringify(got.ok ? (ref as { issue?: unknown }).issue : got.issue)}\n${JSON.stringify(text)}`;
  if (!got.ok && !ref.ok) {
    stats.rejected++;
    if (got.issue.rule !== ref.issue.rule) return `${label}: rule ${got.issue.rule} vs ${ref.issue.rule} (${got.issue.message} / ${ref.issue.message})\n${text}`;
    if (ref.yamlErrorLine !== undefined) {
      if (!got.issue.pos) return `${label}: a syntax error without a position: ${got.issue.message}`;
      stats.errorLines++;
      if (got.issue.pos.line === ref.yamlErrorLine) stats.errorLinesSame++;
      if (Math.abs(got.issue.pos.line - ref.yamlErrorLine) <= 2) stats.errorLinesNear++;
    }
    return undefined;
  }
  if (got.ok && ref.ok) {
    stats.accepted++;
    const d = same(got.source.value, ref.source.value);
    if (d) return `${label}: value ${d}\n${text}`;
    for (const p of paths(ref.source.value)) {
      const a = JSON.stringify(got.source.locate(p));
      const b = JSON.stringify(ref.source.locate(p));
      if (a !== b) return `${label}: locate(${JSON.stringify(p)}) ${a} vs ${b}\n${text}`;
    }
  }
  return undefined;
}

function expectAll(texts: [string, string][]) {
  const problems: string[] = [];
  // Broken documents make yaml build thousands of errors: skip their stack traces, and its
  // process warnings (e.g. collection keys in mutated documents) are noise here.
  const { stackTraceLimit } = Error;
  const emitWarning = process.emitWarning;
  Error.stackTraceLimit = 0;
  process.emitWarning = () => {};
  try {
    for (const [label, text] of texts) {
      const d = check(text, label);
      if (d) problems.push(d);
      if (problems.length >= Number(process.env.YAML_DIFF_SHOW ?? 5)) break;
    }
  } finally {
    Error.stackTraceLimit = stackTraceLimit;
    process.emitWarning = emitWarning;
  }
  assert.equal(problems, [], problems.join('\n\n'));
}

/** Seeded PRNG (mulberry32) so failures reproduce. */
function rng(seed: number) {
  const next = seededRandom(seed);
  return { next, int: (n: number) => Math.floor(next() * n), pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)] };
}

// ---------- corpus ----------

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (name === 'node_modules' || name.startsWith('.')) continue;
    if (statSync(p).isDirectory()) walk(p, out);
    else if (/\.(ya?ml|json)$/.test(name)) out.push(p);
  }
  return out;
}
const SHARED = join(ROOT, '..', 'shared');
const FILES = [...walk(join(ROOT, 'test', 'fixtures')), ...walk(join(ROOT, 'examples')), ...(existsSync(SHARED) ? walk(SHARED) : [])];

/** Each file, and each document of the multi-document ones on its own. */
function corpus(): [string, string][] {
  const out: [string, string][] = [];
  for (const f of FILES) {
    const text = readFileSync(f, 'utf8');
    const label = f.slice(ROOT.length);
    out.push([label, text]);
    if (/\n---/.test(text)) {
      for (const [i, d] of parseAllDocuments(text).entries()) {
        if (!('range' in d)) continue;
        out.push([`${label}#${i}`, text.slice(d.range[0], d.range[2])]);
      }
    }
  }
  return out;
}

// ---------- tests ----------

test('fixtures, examples and /work/shared: the same answer as yaml', () => {
  const texts = corpus();
  assert.ok(texts.length > 100, `${texts.length} documents`);
  expectAll(texts);
});

test('the example manifests are read (the YAML one by the reader, the JSON one by the JSON shortcut), to the same agent', () => {
  const y = parseSource('claw.yaml', readFileSync(join(ROOT, 'examples/minimal/claw.yaml')));
  const j = parseSource('claw.json', readFileSync(join(ROOT, 'examples/minimal/claw.json')));
  assert.ok(y.ok && j.ok);
  assert.ok(parseJsonText(readFileSync(join(ROOT, 'examples/minimal/claw.json'), 'utf8')));
  assert.equal((j as any).source.value, (y as any).source.value);
});

const EDGE_CASES = [
  // core schema typing, exactly as yaml resolves plain scalars
  ...['~', 'null', 'Null', 'NULL', 'nULL', 'true', 'True', 'TRUE', 'tRUE', 'false', 'False', 'FALSE', 'yes', 'no', 'on', 'off', 'y', 'n'],
  ...['0', '-0', '+0', '007', '012', '-12', '+12', '0o17', '0o8', '0x1F', '0X1F', '0x', '0b101', '1_000', '12345678901234567891', '9007199254740993'],
  ...['1.', '.5', '-.5', '+1.5', '1.0', '-0.0', '1e3', '1E+3', '-1e-3', '.5e1', '1.e2', 'e3', '1e', '.', '..', '.inf', '-.inf', '+.Inf', '.INF', '.nan', '.NaN', '.NAN', '-.nan', 'inf', 'nan', 'NaN', 'Infinity'],
  ...['0.1.2', '1:2', '12:30:00', '2026-01-01', '1,000', '0x1g', '00', '-', '--', '-x', '-1x', '+', '+x'],
].flatMap((s) => [`a: ${s}\n`, `- ${s}\n`, `a: [${s}]\n`, `a: {k: ${s}}\n`, `${s}: 1\n`, `${s}\n`]);

const SYNTAX_CASES = [
  '', '\n', '# only a comment\n', '---\n', '--- # c\na: 1\n', '# c\n---\na: 1\n', '---\n---\n', 'a: 1\n---\nb: 2\n', 'a: 1\n...\n', '...\n', '%YAML 1.2\n---\na: 1\n', '---a\n', '--- a\n',
  'a: 1\n', 'a:  1  \n', 'a  : 1\n', 'a:1\n', '"a":1\n', '"a": 1\n', "'a': 1\n", '"a" : 1\n', '"a\\"b": 1\n', "'it''s': 1\n", 'a b: c d\n', 'a#b: 1\n', 'a #b: 1\n', 'a: b #c\n', 'a: b#c\n', 'a: "b"#c\n', 'a: "b" #c\n', "a: 'b'#c\n",
  'a: b: c\n', 'a: b:\n', 'a: -\n', 'a: - b\n', 'a: ?b\n', 'a: :b\n', 'a: &x b\n', 'a: *x\n', 'a: !!str 1\n', 'a: !x b\n', 'a: |\n  x\n', 'a: >\n  x\n', 'a: %x\n', 'a: @x\n', 'a: `x\n', 'a: x`\n', 'a: ,x\n', 'a: x,y\n', 'a: ]\n', 'a: }\n',
  'a: http://x.y/z?q=1#f\n', 'a: "http://x"\n', 'a: c:\\dir\n', 'a: "\\x41\\u00e9\\U0001F600\\N\\_\\L\\P\\0\\a\\b\\e\\f\\n\\r\\t\\v\\ \\"\\/\\\\"\n', 'a: "\\q"\n', 'a: "\\ud800"\n', 'a: "\\U00110000"\n', 'a: "\\x4"\n', 'a: "unterminated\n', "a: 'x\n", 'a: "multi\n  line"\n', "a: 'multi\n  line'\n", 'a: "x\\\n  y"\n',
  'a: b\n  c\n', 'a: b\nc\n', 'a:\n  b\n', 'a:\n  b\n  c\n', 'a:\n  b\nc: 1\n', 'a: 1\n b: 2\n', ' a: 1\nb: 2\n', '  a: 1\n  b: 2\n', 'a:\n  b: 1\n c: 2\n', 'a:\n    b: 1\n  c: 2\n',
  'a:\n- x\n- y\nb: 1\n', 'a:\n  - x\n  - y\n', 'a:\n  - x\n   - y\n', 'a:\n  - x\n - y\n', '- a\n- b\n', '-\n- a\n', '- \n', '-\n', '- - a\n  - b\n- c\n', '- - - a\n', '-   a: 1\n    b: 2\n', '- a: 1\n  b: 2\n- c\n', '- a: 1\n b: 2\n', '- a: 1\n   b: 2\n', '- a:\n  - x\n  b: 1\n', '- a:\n- b\n', '- a:\n    b: 1\n', 'a: 1\n- b\n', '- a\nb: 1\n', '-a\n', '-1\n', '- -1\n',
  'a:\n  # comment\n  b: 1\n', 'a: 1\n# c\n  # d\nb: 2\n', '# c\n\n\na: 1\n\n# d\n', 'a: 1\r\nb:\r\n  c: 2\r\n', 'a: 1\rb: 2\n', 'a:\t1\n', 'a: x\ty\n', '\ta: 1\n', 'a: 1 \n', 'a: "x"   \n',
  'a: [b, c]\n', 'a: [ b , c ]\n', 'a: []\n', 'a: [ ]\n', 'a: {}\n', 'a: { }\n', 'a: [b, c,]\n', 'a: [b c, d]\n', 'a: [b: 1]\n', 'a: [b, [c, d], {e: f}]\n', 'a: {b: 1, c}\n', 'a: {b:1}\n', 'a: {"b":1}\n', "a: {'b':1}\n", 'a: {b: }\n', 'a: {b: , c: 1}\n', 'a: {b: 1,}\n', 'a: {b: 1, b: 2}\n', 'a: {"b": 1, b: 2}\n',
  'a: [b, - c]\n', 'a: [-1, -x]\n', 'a: [b\n  , c]\n', 'a: [b, c] # x\n', 'a: [b, c]x\n', 'a: [b]]\n', 'a: {b: c}}\n', 'a: [b #c]\n', 'a: [b#c]\n', 'a: [b:c]\n', 'a: [b: c]\n', 'a: ["b": c]\n', 'a: [&x b]\n', 'a: [*x]\n', 'a: [!x b]\n', 'a: [%x]\n', 'a: [b, "c"]\n', "a: ['b', 'c''d']\n", 'a: {b: [1, 2], c: {d: e}}\n', '[a, b]\n', '{a: b}\n', '[a, b]: c\n', '{a: b}: c\n', '? a\n: b\n',
  'a: 1\na: 2\n', 'a: 1\n"a": 2\n', "a: 1\n'a': 2\n", '1: a\n"1": b\n', 'true: a\n', 'null: a\n', '~: a\n', ': a\n', '<<: {a: 1}\n', '__proto__: 1\n', '"__proto__": {a: 1}\n', 'constructor: 1\ntoString: 2\nhasOwnProperty: 3\n', 'a: {__proto__: 1}\n',
  `${'k'.repeat(1023)}: 1\n`, `${'k'.repeat(1025)}: 1\n`, `"${'k'.repeat(1030)}": 1\n`, `{"${'k'.repeat(1030)}": 1}\n`,
  'plain scalar document\n', '"quoted document"\n', 'two\nlines\n', 'a: x\u00a0y\n', 'a: \u00a0x\n', 'a: x\u0085y\n', 'a: x\u2028y\n', 'a: x\ufeffy\n', 'a: \x7f\n', 'a: \x07\n', 'é: ü\n', '日本: 語\n', 'a: 😀\n',
  // JSON
  '{}', '[]', '{"a": 1}', '{"a":1,"a":2}', '{"a": {"b": 1, "b": 2}}', '{"a": [{"b": 1}, {"b": 2}]}', '{"a\\u0062": 1, "ab": 2}', '{"a": 1, "b": {"a": 1}}', '{\n\t"a": 1\n}', '{\n"a"\n:\n1\n}', '[\n1,\n2\n]', '{"a": -0, "b": 1e400, "c": 1.0, "d": 12345678901234567891}',
  '{"__proto__": {"x": 1}}', '{"a": "\\ud800"}', '{"a": "\\u2028"}', '{"a": "\u2028"}', '{"a": "\u007f"}', '{"a": "\ufeff"}', '{"a": 1} # c', '{"a": 1,}', '{a: 1}', '{"a": 1}\n---\n{"b": 2}', ' \n {"a": [1, 2, {"b": null}]} \n', '{"a": "tab\there"}', '{"a":\r\n1}', '"json string"', '123', 'null',
  `{"${'k'.repeat(2000)}": 1}`, `[${'1,'.repeat(500)}1]`,
  // multi-line scalars: folding, blank lines, indentation of continuation lines, comments
  'a: b\n  c\n\n  d\n', 'a: b\n\n\n  c\n', 'a: b\n  c # x\n  d\n', 'a: b\n  # x\n  c\n', '- a\n  b\n- c\n', 'a:\n  x\n y\n', 'a b\nc d\n', 'a: b \n  c  \n', 'a: "b \n  c"\n', 'a: "b\\ \n  c"\n', 'a: "b\\t\n  c"\n',
  'a: "b\n\n  c"\n', "a: 'b\n\n\n  c'\n", 'a: "b\\\n\n  c"\n', 'a: "x\n"\n', 'a: "x\n  "\n', '"x\ny"\n', 'a: "x\n---\n"\n', 'a: b\n---\n', 'a: [b,\n  c]\n', 'a: [b,\nc]\n', 'a: {b: 1,\n  c: 2}\n', 'a: [b\n  c, d]\n', '[a,\n b]: 1\n', 'a: [\n  b,\n  c,\n]\n', 'a: [b, # x\n  c]\n', '{a: 1, b: [x, y], c: {d: e}}\n',
  // block scalars
  'a: |\n  x\n  y\n', 'a: |-\n  x\n\n', 'a: |+\n  x\n\n\n', 'a: |+\n  x', 'a: |\n  x', 'a: |2\n   x\n', 'a: |-2\n   x\n', 'a: |2-\n   x\n', 'a: |0\n  x\n', 'a: |10\n  x\n', 'a: |x\n  x\n', 'a: | # c\n  x\n', 'a: |#c\n  x\n', 'a: |\n\n  x\n\n  y\n\n', 'a: |\n    \n  x\n', 'a: |\n  \n  x\n', 'a: |\n   \n  x\n',
  'a: >\n  x\n  y\n\n  z\n', 'a: >\n  x\n    y\n  z\n', 'a: >\n\n  x\n', 'a: >-\n  x\n  y\n', 'a: >+\n  x\n\n', 'a: >\n  x\n\n    y\n\n  z\n', 'a: >\n   x\n  y\n', 'a: |\n  x\n # c\nb: 1\n', 'a: |\n  x\n  # not a comment\nb: 1\n', 'a: |\nb: 1\n', 'a: |\n\nb: 1\n', 'a: |+\n\nb: 1\n', 'a: |-\n\nb: 1\n', '- |\n  x\n- >-\n  y\n', '- |1\n  x\n', '--- |\n  x\n', '--- |\nx\n', '--- >\n x\n# y\n', '|\n x\n', 'a: |\n\tx\n', 'a: |\n  x\ty\n', 'a: |\n  x\n\t\n',
  // anchors, aliases, tags
  'a: &x 1\nb: *x\n', 'a: &x [1, 2]\nb: *x\n', 'a: &x\n  k: v\nb: *x\n', '&x a: b\nc: *x\n', 'a: *x\n', 'a: &x 1\na2: &x 2\nb: *x\n', 'a: &x [*x]\n', '- &x a\n- *x\n- *x\n', 'a: & x\n', 'a: &\n', 'a: *\n', 'a: &x\nb: *x\n', 'a: &x !!str 1\nb: *x\n', 'a: !!str &x 1\n', '*x: 1\n', 'a: &x 1\n*x : 2\n', 'a: [&x 1, *x]\n', 'a: {k: &x 1, j: *x}\n',
  'a: !!str 1\n', 'a: !!int "12"\n', 'a: !!int 1.5\n', 'a: !!float 1.5\n', 'a: !!float 1\n', 'a: !!bool "true"\n', 'a: !!bool yes\n', 'a: !!null ""\n', 'a: !!null\n', 'a: !!str\n', 'a: !\n', 'a: ! 12\n', 'a: !foo x\n', 'a: !!binary x\n', 'a: !!map {b: 1}\n', 'a: !!seq [b]\n', 'a: !!map [b]\n', 'a: !!str [b]\n', 'a: !!map\n  b: 1\n', '--- !!map\na: 1\n', '!!map\na: 1\n', 'a: !<tag:yaml.org,2002:str> 1\n', 'a: !<x> 1\n', 'a: !!str |\n  x\n', 'a: !!int |\n  1\n',
  // documents and directives
  '%YAML 1.2\n---\na: 1\n', '%YAML 1.1\n---\na: yes\n', '%TAG ! tag:x,2000:\n---\na: 1\n', '%FOO x\n---\na: 1\n', '%YAML 1.2\na: 1\n', 'a: 1\n...\n', 'a: 1\n...\n---\nb: 2\n', 'a: 1\n... # c\n', '--- a\n', '--- [a]\n', '--- a: 1\n', '--- - a\n', '---\n...\n', '--- \n  a: 1\n', 'a: 1\n--- \n',
  // keys and structure
  '? a\n: b\n', 'a: {? b: c}\n', '[a]: b\n', '{a: b}: c\n', 'a: [b: c, d]\n', 'a: [b: c: d]\n', 'a: {b, c: d}\n', 'a: {: b}\n', 'a: [: b]\n', 'a: ["b": c]\n', 'a: {"b":c}\n', 'a: {b:c}\n', '1: a\n"1": b\n', 'null: a\n"": b\n', '.inf: a\n', 'true: a\nTrue: b\n',
  '- a: 1\n  - b\n', 'a:\n  - b\n  c: 1\n', 'a: 1\n  b: 2\n', '- - - a\n    - b\n  - c\n', '-\n  a: 1\n', '- \n  - a\n', 'a:\n\n  b: 1\n', 'a:\n  b:\n    c:\n      d: 1\n', 'a:\n  b: 1\n  c:\n  d: 2\n',
];

test('edge cases: typing, syntax, duplicates, odd characters, JSON', () => {
  expectAll([...EDGE_CASES, ...SYNTAX_CASES].map((t, i) => [`edge#${i}${t.startsWith('{') || t.startsWith('[') ? '.json' : ''}`, t]));
});

test('resolvePlain matches yaml for every plain scalar of the edge cases', () => {
  for (const s of ['~', 'null', 'True', 'x', '0o17', '0x1F', '-0', '.5', '1e3', '-.inf', '.NaN', '12345678901234567891', '1_000', 'nULL']) {
    assert.is(same(resolvePlain(s), parseDocument(`${s}\n`).toJS()), undefined, s);
  }
});

// ---------- generated documents ----------

const PLAIN_POOL = [
  'x', 'demo', 'minimal-bot', '0.3.0', 'http://localhost:11434/v1', './p.yaml', 'claw://local/tool/x', '*/5 * * * *', 'a b c', 'llama3', 'openai-compatible',
  '1', '0', '-1', '42', '3.14', '-0', '1e3', '.5', 'true', 'false', 'True', 'null', '~', 'NULL', '0x1F', '0o17', '.inf', '-.inf', '.nan', 'yes', 'no', '012',
  'a: b', 'a #b', 'a#b', '-x', '- x', '? x', ':x', '&x', '*x', '!x', '|', '>', '%x', '@x', '`x', 'x,y', '[x]', '{x}', 'x]', "it's", 'say "hi"', 'é', '日本', 'a  b', 'x:', 'c:\\dir',
];
const KEY_POOL = ['name', 'kind', 'claw', 'metadata', 'spec', 'providers', 'a', 'b', 'a b', 'x-y', 'k_1', 'CamelCase', '1', 'true', 'null', '"q"', "'s'", 'é', '<<', '__proto__', 'a#b', 'a: b', '-k', 'k]', '[k]', 'toString'];

type Tree = { t: 'map'; e: [string, Tree][] } | { t: 'seq'; e: Tree[] } | { t: 'scalar'; s: string };

function genTree(r: ReturnType<typeof rng>, depth: number): Tree {
  const roll = r.next();
  if (depth > 3 || roll < 0.35) return { t: 'scalar', s: r.pick(PLAIN_POOL) };
  const n = r.int(4) + (r.next() < 0.1 ? 0 : 1);
  if (roll < 0.7) {
    const keys = Array.from({ length: n }, () => (r.next() < 0.85 ? r.pick(KEY_POOL.slice(0, 10)) : r.pick(KEY_POOL)));
    return { t: 'map', e: keys.map((k) => [k, genTree(r, depth + 1)]) };
  }
  return { t: 'seq', e: Array.from({ length: n }, () => genTree(r, depth + 1)) };
}

function scalarText(r: ReturnType<typeof rng>, s: string): string {
  const roll = r.next();
  if (roll < 0.6) return s;
  if (roll < 0.8) return JSON.stringify(s);
  if (roll < 0.9) return `'${s.replace(/'/g, "''")}'`;
  return `"${[...s].map((c) => (r.next() < 0.2 ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}` : c === '"' || c === '\\' ? `\\${c}` : c)).join('')}"`;
}

function flowText(r: ReturnType<typeof rng>, t: Tree): string {
  const sp = () => (r.next() < 0.8 ? ' ' : r.next() < 0.5 ? '' : '  ');
  if (t.t === 'scalar') return scalarText(r, t.s);
  if (t.t === 'seq') return `[${sp()}${t.e.map((x) => flowText(r, x)).join(`,${sp()}`)}${sp()}]`;
  return `{${sp()}${t.e.map(([k, v]) => `${scalarText(r, k)}:${r.next() < 0.9 ? ' ' : ''}${flowText(r, v)}`).join(`,${sp()}`)}${sp()}}`;
}

/** Block YAML in varied styles: indentation width, sequence indentation, compact items, flow leaves, comments, blank lines, trailing spaces. */
function blockText(r: ReturnType<typeof rng>, t: Tree, indent: number, style: { step: number; seqIndent: boolean; crlf: boolean }): string[] {
  const pad = ' '.repeat(indent);
  const trail = () => (r.next() < 0.05 ? ' ' : '') + (r.next() < 0.05 ? ' # note' : '');
  if (t.t === 'scalar') return [`${pad}${scalarText(r, t.s)}${trail()}`];
  if (t.e.length === 0 || r.next() < 0.1) return [`${pad}${flowText(r, t)}${trail()}`];
  const out: string[] = [];
  if (t.t === 'seq') {
    for (const item of t.e) {
      if (r.next() < 0.05) out.push(r.next() < 0.5 ? '' : `${pad}# comment`);
      if (item.t === 'scalar' || r.next() < 0.2) {
        out.push(`${pad}- ${item.t === 'scalar' ? scalarText(r, item.s) : flowText(r, item)}${trail()}`);
      } else if (r.next() < 0.6) {
        // compact: the first line of the nested node shares the dash's line
        const inner = blockText(r, item, indent + 2, style);
        out.push(`${pad}- ${inner[0].slice(indent + 2)}`, ...inner.slice(1));
      } else {
        out.push(`${pad}-${trail()}`, ...blockText(r, item, indent + style.step, style));
      }
    }
    return out;
  }
  for (const [k, v] of t.e) {
    if (r.next() < 0.05) out.push(r.next() < 0.5 ? '' : `${' '.repeat(r.int(indent + 3))}# comment`);
    const key = scalarText(r, k);
    if (v.t === 'scalar' || (v.t !== 'map' && v.e.length === 0) || r.next() < 0.15) {
      out.push(`${pad}${key}:${r.next() < 0.05 ? '  ' : ' '}${v.t === 'scalar' ? scalarText(r, v.s) : flowText(r, v)}${trail()}`);
    } else {
      out.push(`${pad}${key}:${trail()}`);
      const childIndent = v.t === 'seq' && !style.seqIndent ? indent : indent + style.step;
      out.push(...blockText(r, v, childIndent, style));
    }
  }
  return out;
}

function generated(seed: number, count: number): [string, string][] {
  const r = rng(seed);
  const out: [string, string][] = [];
  for (let i = 0; i < count; i++) {
    const tree = genTree(r, 0);
    const style = { step: 1 + r.int(4), seqIndent: r.next() < 0.5, crlf: r.next() < 0.1 };
    let text: string;
    const kind = r.next();
    if (kind < 0.15) {
      // JSON, minified or pretty, from a tree of JSON-safe scalars
      const toJs = (t: Tree): unknown =>
        t.t === 'scalar' ? (/^-?\d+(\.\d+)?$/.test(t.s) ? Number(t.s) : t.s) : t.t === 'seq' ? t.e.map(toJs) : t.e.map(([k, v]) => `"${JSON.stringify(k).slice(1, -1)}": ${JSON.stringify(toJs(v))}`);
      const v = toJs(tree);
      text = Array.isArray(v) && tree.t === 'map' ? `{${(v as string[]).join(r.next() < 0.5 ? ', ' : ',\n  ')}}` : JSON.stringify(v, null, r.pick([0, 2, '\t']));
    } else if (kind < 0.25) {
      text = flowText(r, tree);
    } else {
      const lines = blockText(r, tree, r.next() < 0.05 ? 2 : 0, style);
      if (r.next() < 0.1) lines.unshift(r.pick(['---', '--- # doc', '# header', '# header\n---']));
      text = lines.join(style.crlf ? '\r\n' : '\n') + (r.next() < 0.9 ? '\n' : '');
    }
    out.push([`gen#${seed}/${i}${kind < 0.15 ? '.json' : ''}`, text]);
  }
  return out;
}

test('4,000 generated documents in many styles', () => {
  const before = stats.accepted;
  for (let k = 0; k < SCALE; k++) expectAll(generated(SEED + 1 + k * 100, 4000));
  const accepted = stats.accepted - before;
  assert.ok(accepted > 1000 * SCALE, `only ${accepted} of ${4000 * SCALE} generated documents were valid YAML: the generator is broken`);
});

// ---------- generated documents: the rest of YAML (folding, block scalars, anchors, tags) ----------

const WORDS = ['x', 'demo', 'a b', 'llama3', '1', '-2', '0x1F', '1.5', 'true', 'null', '~', 'it', 'say', 'é', '#', 'c:', 'a#b', ':x', '-y', '[x]', '{y}', '"q"', "'s'", '\\', '.inf'];

/** Block YAML that uses everything manifests may write beyond the basics, with random layout details. */
function richText(r: ReturnType<typeof rng>, depth: number, indent: number, anchors: string[]): string[] {
  const pad = ' '.repeat(indent);
  const step = 1 + r.int(3);
  const words = (n: number) => Array.from({ length: n }, () => r.pick(WORDS)).join(' ');
  const props = (kind: 'scalar' | 'map' | 'seq', text: string): string => {
    let p = '';
    if (r.next() < 0.15) {
      const name = `a${r.int(4)}`;
      anchors.push(name);
      p += `&${name} `;
    }
    if (r.next() < 0.12) {
      const tags = kind === 'map' ? ['!!map', '!'] : kind === 'seq' ? ['!!seq', '!'] : ['!!str', '!', /^-?\d+$/.test(text) ? '!!int' : '!!str', /^-?\d+\.\d+$/.test(text) ? '!!float' : '!!str', text === 'true' ? '!!bool' : '!!str', text === 'null' ? '!!null' : '!'];
      p = r.next() < 0.5 ? `${r.pick(tags)} ${p}` : `${p}${r.pick(tags)} `;
    }
    return p;
  };
  /** A scalar value that starts after "key: " or "- " (the first line) and may continue on more lines. */
  const scalar = (): string[] => {
    const roll = r.next();
    if (roll < 0.08 && anchors.length > 0) return [`*${r.pick(anchors)}`];
    if (roll < 0.3) {
      // block scalar
      const ind = r.next() < 0.2 ? String(1 + r.int(3)) : '';
      const chomp = r.pick(['', '', '-', '+']);
      const head = `${r.pick(['|', '>'])}${r.next() < 0.5 ? ind + chomp : chomp + ind}${r.next() < 0.2 ? ' # c' : ''}`;
      const body = indent + (ind ? Number(ind) : step);
      const lines = [`${props('scalar', '')}${head}`];
      const n = 1 + r.int(4);
      for (let i = 0; i < n; i++) {
        const extra = r.next() < 0.2 ? ' '.repeat(1 + r.int(3)) : '';
        if (r.next() < 0.15) lines.push(r.next() < 0.5 ? '' : ' '.repeat(body + r.int(3)));
        lines.push(`${' '.repeat(body)}${extra}${words(1 + r.int(3))}`);
      }
      if (r.next() < 0.3) lines.push('', ...(r.next() < 0.5 ? [''] : []));
      return lines;
    }
    if (roll < 0.55) {
      // multi-line plain or quoted, folded
      const q = r.pick(['', '"', "'"]);
      const esc = (w: string) => (q === '"' ? w.replace(/\\/g, '\\\\').replace(/"/g, '\\"') : q === "'" ? w.replace(/'/g, "''") : w);
      const safe = (w: string) => (q ? esc(w) : w.replace(/[#:"'\[\]{}\\,&*!|>%@`-]/g, 'z') || 'z');
      const first = q ? `${q}${esc(words(2))}` : `w${safe(words(2))}`;
      const lines = [`${props('scalar', first)}${first}`];
      const n = 1 + r.int(3);
      for (let i = 0; i < n; i++) {
        if (r.next() < 0.3) lines.push(r.next() < 0.7 ? '' : ' '.repeat(r.int(indent + 3)));
        let w = safe(words(1 + r.int(2)));
        if (q === '"' && r.next() < 0.3) w += r.pick(['\\x41', '\\u00e9', '\\U0001F600', '\\t', '\\n', '\\ ', '\\"', '\\\\', '\\/', '\\N', '\\_']);
        lines.push(`${' '.repeat(indent + 1 + r.int(step + 1))}${w}${q === '"' && i < n - 1 && r.next() < 0.15 ? '\\' : ''}`);
      }
      lines[lines.length - 1] += q;
      return lines;
    }
    const w = r.pick(WORDS);
    const text = /^[a-z0-9.~-]/i.test(w) && !/[#:]/.test(w) ? w : JSON.stringify(w);
    return [`${props('scalar', text)}${text}`];
  };
  const flow = (): string[] => {
    const items = Array.from({ length: 1 + r.int(3) }, (_, i) => (r.next() < 0.5 ? r.pick(['x', '1', '"q"', 'true', 'a b']) : `k${i}: ${r.pick(['v', '2', "'s'"])}`));
    const open = r.next() < 0.5 ? '[' : '{';
    const xs = open === '{' ? items.map((x, i) => (x.includes(':') ? x : `j${i}: ${x}`)) : items;
    const lines = [`${props(open === '[' ? 'seq' : 'map', '')}${open}${xs[0]}`];
    for (const x of xs.slice(1)) {
      if (r.next() < 0.5) lines[lines.length - 1] += `, ${x}`;
      else lines.push(`${' '.repeat(indent + 1 + r.int(3))}, ${x}`.replace(/ , /, ' ,'));
    }
    lines[lines.length - 1] += `${r.next() < 0.2 ? ',' : ''}${open === '[' ? ']' : '}'}`;
    return lines;
  };
  const value = (d: number): { inline: string[] } | { block: string[] } => {
    const roll = r.next();
    if (d > 2 || roll < 0.55) return { inline: scalar() };
    if (roll < 0.65) return { inline: flow() };
    return { block: richText(r, d + 1, indent + step, anchors) };
  };
  const out: string[] = [];
  const n = 1 + r.int(4);
  if (r.next() < 0.5 || depth > 2) {
    const used = new Set<string>();
    for (let i = 0; i < n; i++) {
      let key = r.pick(['name', 'kind', 'spec', 'a', 'b', 'x y', '"q k"', "'s k'", '1', 'true']);
      if (used.has(key)) key = `${key.replace(/['"]/g, '')}${i}`;
      used.add(key);
      if (r.next() < 0.05) out.push(`${pad}# comment`);
      const v = value(depth);
      if ('inline' in v) out.push(`${pad}${key}: ${v.inline[0]}`, ...v.inline.slice(1));
      else {
        const p = r.next() < 0.15 ? ` ${props('map', '')}`.trimEnd() : '';
        out.push(`${pad}${key}:${p}`, ...v.block);
      }
    }
  } else {
    for (let i = 0; i < n; i++) {
      const v = value(depth);
      if ('inline' in v) out.push(`${pad}- ${v.inline[0]}`, ...v.inline.slice(1));
      else if (r.next() < 0.5 && v.block.length > 0 && v.block[0].trimStart() !== v.block[0] && !v.block[0].trimStart().startsWith('#')) {
        // compact: the nested collection starts on the dash's line, so it must sit at indent + 2
        const inner = richText(r, depth + 1, indent + 2, anchors);
        out.push(`${pad}- ${inner[0].slice(indent + 2)}`, ...inner.slice(1));
      } else out.push(`${pad}-`, ...v.block);
    }
  }
  return out;
}

function richDocs(seed: number, count: number): [string, string][] {
  const r = rng(seed);
  const out: [string, string][] = [];
  for (let i = 0; i < count; i++) {
    const lines = richText(r, 0, 0, []);
    if (r.next() < 0.15) lines.unshift(r.pick(['---', '%YAML 1.2\n---', '# head\n---']));
    if (r.next() < 0.05) lines.push('...');
    out.push([`rich#${seed}/${i}`, lines.join(r.next() < 0.05 ? '\r\n' : '\n') + (r.next() < 0.9 ? '\n' : '')]);
  }
  return out;
}

test('3,000 generated documents with folding, block scalars, anchors, aliases and tags', () => {
  const before = stats.accepted;
  for (let k = 0; k < SCALE; k++) expectAll(richDocs(SEED + 11 + k * 100, 3000));
  const accepted = stats.accepted - before;
  assert.ok(accepted > 1500 * SCALE, `only ${accepted} of ${3000 * SCALE} rich documents were valid YAML: the generator is broken`);
});

// ---------- mutations: hostile and broken inputs ----------

const MUTATION_CHARS = [' ', ' ', '\n', ':', '-', '#', '"', "'", '[', ']', '{', '}', ',', 'a', '1', '&', '*', '!', '|', '>', '\t', '\\', '?', '%', '.', '~', '\r'];

function mutations(seed: number, sources: [string, string][], count: number): [string, string][] {
  const r = rng(seed);
  const out: [string, string][] = [];
  for (let i = 0; i < count; i++) {
    const [label, base] = r.pick(sources);
    let text = base;
    const edits = 1 + r.int(3);
    for (let e = 0; e < edits; e++) {
      const at = r.int(text.length + 1);
      const op = r.next();
      if (op < 0.4) text = text.slice(0, at) + r.pick(MUTATION_CHARS) + text.slice(at);
      else if (op < 0.7) text = text.slice(0, at) + text.slice(at + 1 + r.int(3));
      else if (op < 0.85) {
        // duplicate a line (duplicate keys, broken structure)
        const lines = text.split('\n');
        const li = r.int(lines.length);
        lines.splice(li, 0, lines[li]);
        text = lines.join('\n');
      } else {
        // re-indent a line by ±1..2
        const lines = text.split('\n');
        const li = r.int(lines.length);
        lines[li] = r.next() < 0.5 ? ' '.repeat(1 + r.int(2)) + lines[li] : lines[li].replace(/^ {1,2}/, '');
        text = lines.join('\n');
      }
    }
    out.push([`mut#${seed}/${i} of ${label}`, text]);
  }
  return out;
}

test('5,000 random mutations of fixtures and generated documents: never a different answer', () => {
  const small = corpus().filter(([, t]) => t.length < 6000);
  for (let k = 0; k < SCALE; k++) expectAll(mutations(SEED + 7 + k * 100, [...small, ...generated(SEED + 2 + k * 100, 300), ...richDocs(SEED + 12 + k * 100, 300)], 5000));
});

test('the existing hostile inputs are rejected exactly as before', () => {
  const texts: [string, string][] = [
    ['deep-flow', '['.repeat(100_000)],
    ['deep-json.json', `${'{"a":'.repeat(70)}1${'}'.repeat(70)}`],
    ['deep-seq', `${'- '.repeat(70)}x\n`],
    ['alias-bomb', (() => {
      let s = 'a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n';
      for (let i = 1; i < 10; i++) s += `a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(', ')}]\n`;
      return s;
    })()],
    ['deep-block', Array.from({ length: 100 }, (_, i) => `${' '.repeat(i * 2)}k${i}:`).join('\n')],
    ['depth-64-flow', `${'['.repeat(64)}${']'.repeat(64)}`],
    ['depth-64-block', Array.from({ length: 64 }, (_, i) => `${' '.repeat(i)}k:`).join('\n') + ' 1\n'],
    ['depth-65-block', Array.from({ length: 65 }, (_, i) => `${' '.repeat(i)}k:`).join('\n') + ' 1\n'],
    ['mixed-depth', `${Array.from({ length: 40 }, (_, i) => `${' '.repeat(i)}k:`).join('\n')} ${'['.repeat(30)}${']'.repeat(30)}\n`],
  ];
  expectAll(texts);
});

test.after(() => {
  // Visible in the test output: how much of the corpus the fast path handles.
  const dl = [...stats.deliberate].map(([why, n]) => `${n}× ${why}`).join('; ');
  console.log(`  yaml differential: ${stats.checked} documents: ${stats.accepted} accepted alike, ${stats.rejected} rejected alike (error on yaml's line in ${stats.errorLinesSame}/${stats.errorLines}, within 2 lines in ${stats.errorLinesNear}), ${stats.json} via the JSON shortcut; refused on purpose: ${dl || 'none'}`);
});

test.run();
