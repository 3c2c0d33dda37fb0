// Parsing one YAML or JSON document with positions, so every issue can say file:line:col.
// One reader: src/yaml (YAML 1.2, which JSON is a subset of), whose nodes keep their positions for
// `locate`. JSON objects/arrays take a shortcut through the native JSON.parse (src/yaml/json.ts);
// only when an issue needs a position is the same text read by src/yaml, lazily.
import { exceedsDepth } from '../protocol/depth.ts';
import { parseYaml } from '../yaml/index.ts';
import { parseJsonText } from '../yaml/json.ts';
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

const tooDeep = (file: string) => fail(file, `document nests deeper than ${MAX_SOURCE_DEPTH} levels`, 'too-deep');

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
  if (flowDepth(text) > MAX_SOURCE_DEPTH) return tooDeep(file);
  const json = parseJsonText(text);
  if (json) {
    if (exceedsDepth(json.value, MAX_SOURCE_DEPTH)) return tooDeep(file);
    // Issues are the rare path: only they pay for reading the text again, with positions.
    let locator: Locate | undefined;
    const locate: Locate = (segments) => {
      if (!locator) {
        // JSON allows tabs as whitespace where YAML refuses them as indentation; in valid JSON a tab can only be
        // whitespace (never inside a string), so reading it with spaces instead changes no value and no offset.
        const r = parseYaml(text.includes('\t') ? text.replaceAll('\t', ' ') : text);
        locator = r.ok ? r.locate : () => undefined;
      }
      return locator(segments);
    };
    return { ok: true, source: { file, value: json.value, locate } };
  }
  const r = parseYaml(text);
  if (!r.ok) {
    if (r.kind === 'too-deep') return fail(file, 'document nests too deeply to parse', 'too-deep');
    // An alias bomb is well-formed YAML: its message stands alone (as `yaml`'s did), with a position now.
    const prefix = r.kind === 'unsupported' ? 'YAML not supported: ' : r.kind === 'alias-limit' ? '' : 'YAML syntax error: ';
    return fail(file, `${prefix}${r.message}`, 'syntax', r.pos);
  }
  if (exceedsDepth(r.value, MAX_SOURCE_DEPTH)) return tooDeep(file);
  return { ok: true, source: { file, value: r.value, locate: r.locate } };
}

type Locate = (segments: readonly PathSegment[]) => SourcePosition | undefined;

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
