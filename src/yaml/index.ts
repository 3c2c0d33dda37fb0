// The YAML reader's entry point: text → { value, locate } or one error with a 1-based line and column.
// One document of YAML 1.2 as manifests use it (see parser.ts for what is supported and refused).
import { toValue, locateOffset } from './compose.ts';
import { YamlError, type YamlErrorKind } from './errors.ts';
import { Parser } from './parser.ts';

export interface YamlPosition {
  line: number;
  col: number;
}

export type YamlResult =
  | { ok: true; value: unknown; locate(segments: readonly (string | number)[]): YamlPosition | undefined }
  | { ok: false; message: string; kind: YamlErrorKind; pos: YamlPosition };

export function parseYaml(text: string): YamlResult {
  let lines: number[] | undefined;
  const toPos = (offset: number): YamlPosition => {
    lines ??= lineStarts(text);
    let lo = 0;
    let hi = lines.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lines[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, col: offset - lines[lo] + 1 };
  };
  try {
    // A lone CR is a line break to YAML but not to anyone reading the file: refused (docs/manifest.md).
    for (let i = text.indexOf('\r'); i !== -1; i = text.indexOf('\r', i + 1)) {
      if (text.charCodeAt(i + 1) !== 0x0a) throw new YamlError('a carriage return (CR) must be followed by a line feed (LF)', i);
    }
    const root = new Parser(text).document();
    const value = toValue(root);
    return {
      ok: true,
      value,
      locate: (segments) => {
        const at = locateOffset(root, segments);
        return at === undefined ? undefined : toPos(at);
      },
    };
  } catch (e) {
    if (e instanceof YamlError) return { ok: false, message: e.message, kind: e.kind, pos: toPos(Math.min(e.offset, text.length)) };
    if (e instanceof RangeError) return { ok: false, message: 'document nests too deeply to parse', kind: 'too-deep', pos: { line: 1, col: 1 } };
    throw e;
  }
}

/** Offsets where lines start (after each LF), the way `yaml`'s LineCounter counts them. */
function lineStarts(text: string): number[] {
  const out = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) out.push(i + 1);
  return out;
}
