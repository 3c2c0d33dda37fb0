// Parsing one YAML or JSON document with positions, so every issue can say file:line:col.
// JSON is read by the YAML parser too (YAML 1.2 is a JSON superset), which gives JSON the same positions.
// Fast path: most manifests are JSON or a plain YAML subset that fast-yaml.ts reads in microseconds;
// the `yaml` package (several ms of cold code at start-up) is loaded only when that reader gives up,
// or when an issue needs a position (`locate`, computed by re-parsing the same text with `yaml`).
import { createRequire } from 'node:module';
import type { Node } from 'yaml';
import { exceedsDepth } from '../protocol/depth.ts';
import { fastParse } from './fast-yaml.ts';
import type { PathSegment, RawIssue, SourcePosition } from './issues.ts';

export const MAX_SOURCE_BYTES = 8 * 1024 * 1024;
export const MAX_SOURCE_DEPTH = 64;

export interface ParsedSource {
  file: string;
  value: unknown;
  /** Position of the node at `segments`, or of its closest existing ancestor. */
  locate(segments: readonly PathSegment[]): SourcePosition | undefined;
}

export type ParseResult = { ok: true; source: ParsedSource } | { ok: false; issue: RawIssue & { pos?: SourcePosition } };

const fail = (file: string, message: string, rule: string, pos?: SourcePosition): ParseResult => ({
  ok: false,
  issue: { file, segments: [], message, rule, pos },
});

export function parseSource(file: string, bytes: Uint8Array): ParseResult {
  if (bytes.length > MAX_SOURCE_BYTES) {
    return fail(file, `file is ${bytes.length} bytes; manifests are limited to ${MAX_SOURCE_BYTES} bytes`, 'file-too-large');
  }
  if (bytes.includes(0)) return fail(file, 'file is binary (contains NUL bytes), expected YAML or JSON text', 'not-text');
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return fail(file, 'file is not valid UTF-8 text, expected YAML or JSON', 'not-text');
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const depth = flowDepth(text);
  if (depth > MAX_SOURCE_DEPTH) {
    return fail(file, `document nests deeper than ${MAX_SOURCE_DEPTH} levels`, 'too-deep');
  }
  const fast = fastParse(text);
  if (fast) {
    if (exceedsDepth(fast.value, MAX_SOURCE_DEPTH)) {
      return fail(file, `document nests deeper than ${MAX_SOURCE_DEPTH} levels`, 'too-deep');
    }
    // Issues are the rare path: only they pay for `yaml`, on the same text, so positions are unchanged.
    let locator: Locate | undefined;
    const locate: Locate = (segments) => {
      if (!locator) {
        try {
          locator = parseWithYaml(text).locate;
        } catch {
          locator = () => undefined;
        }
      }
      return locator(segments);
    };
    return { ok: true, source: { file, value: fast.value, locate } };
  }
  let parsed: ReturnType<typeof parseWithYaml>;
  try {
    parsed = parseWithYaml(text);
  } catch (e) {
    const msg = e instanceof RangeError ? `document nests too deeply to parse` : `cannot parse: ${(e as Error).message}`;
    return fail(file, msg, e instanceof RangeError ? 'too-deep' : 'syntax');
  }
  const { doc, toPos } = parsed;
  if (doc.errors.length > 0) {
    const e = doc.errors[0];
    const msg = e.message.split('\n')[0];
    if (/call stack/i.test(msg)) return fail(file, 'document nests too deeply to parse', 'too-deep');
    return fail(file, `YAML syntax error: ${msg}`, 'syntax', toPos(e.pos[0]));
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    const msg = e instanceof RangeError ? 'document nests too deeply to read' : (e as Error).message;
    return fail(file, msg, e instanceof RangeError ? 'too-deep' : 'syntax');
  }
  if (exceedsDepth(value, MAX_SOURCE_DEPTH)) {
    return fail(file, `document nests deeper than ${MAX_SOURCE_DEPTH} levels`, 'too-deep');
  }
  return { ok: true, source: { file, value, locate: parsed.locate } };
}

type Locate = (segments: readonly PathSegment[]) => SourcePosition | undefined;

let yamlLib: typeof import('yaml') | undefined;

/**
 * The `yaml` package, loaded on first use. In the bundle (dist/claw.mjs) esbuild inlines it behind
 * this `require`, so its module code runs only when called; unbundled ESM (the unit tests) has no
 * `require` in scope and resolves it with createRequire instead.
 */
function yaml(): typeof import('yaml') {
  if (yamlLib) return yamlLib;
  try {
    yamlLib = require('yaml') as typeof import('yaml');
  } catch (e) {
    try {
      yamlLib = createRequire(import.meta.url)('yaml') as typeof import('yaml');
    } catch {
      throw e; // the bundled copy's own failure is the one worth reporting
    }
  }
  return yamlLib;
}

/** Parse with `yaml` (a syntax error is in `doc.errors`; a RangeError escapes), with a locator over the document. */
function parseWithYaml(text: string) {
  const { isMap, isSeq, isScalar, LineCounter, parseDocument } = yaml();
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, uniqueKeys: true, prettyErrors: false });
  const toPos = (offset: number): SourcePosition => {
    const p = lc.linePos(offset);
    return { line: p.line, col: p.col };
  };
  const locate: Locate = (segments) => {
    let node: Node | null | undefined = doc.contents as Node | null;
    let best: SourcePosition | undefined = node?.range ? toPos(node.range[0]) : undefined;
    for (const seg of segments) {
      if (isMap(node)) {
        const pair = node.items.find((it) => (isScalar(it.key) ? it.key.value : it.key) === seg);
        if (!pair) break;
        const keyNode = pair.key as Node | null;
        if (keyNode?.range) best = toPos(keyNode.range[0]);
        node = pair.value as Node | null;
        // Point at the value when there is one on a later segment; the key otherwise.
      } else if (isSeq(node) && typeof seg === 'number') {
        const item = node.items[seg] as Node | undefined;
        if (!item) break;
        if (item.range) best = toPos(item.range[0]);
        node = item;
      } else break;
    }
    return best;
  };
  return { doc, toPos, locate };
}

/**
 * Nesting depth estimate for the pre-check: flow collections ([ and { where a YAML value can start,
 * i.e. after line start, `:`, `-`, `,`, `[` or `{`) and "- - -" block sequences on one line. A bracket
 * inside plain or block text ("see [x]") is not counted. Cheap, so a hostile 100,000-level document
 * never reaches the parser (which can exhaust memory on `- - - ...` in a way nothing can catch).
 */
export function flowDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let quote = '';
  let lineSeq = 0;
  let prev = ''; // previous non-blank character on this line ('' at line start)
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quote) {
      if (ch === '\\' && quote === '"') i++;
      else if (ch === quote) {
        quote = '';
        prev = ch;
      }
      continue;
    }
    if (ch === '\n') {
      lineSeq = 0;
      prev = '';
      continue;
    }
    if (ch === ' ' || ch === '\t') continue;
    const valueStart = prev === '' || prev === ':' || prev === '-' || prev === ',' || prev === '[' || prev === '{';
    if ((ch === '"' || ch === "'") && valueStart) quote = ch;
    else if ((ch === '[' || ch === '{') && valueStart) max = Math.max(max, ++depth);
    else if ((ch === ']' || ch === '}') && depth > 0) depth--;
    else if (ch === '-' && (prev === '' || prev === '-') && (text[i + 1] === ' ' || text[i + 1] === '\t')) max = Math.max(max, depth + ++lineSeq);
    else if (ch === '#' && depth === 0 && (prev === '' || text[i - 1] === ' ')) {
      while (i + 1 < text.length && text[i + 1] !== '\n') i++;
      continue;
    }
    prev = ch;
  }
  return max;
}
