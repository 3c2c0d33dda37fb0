// Scalar typing: the YAML 1.2 core schema (YAML 1.2.2 §10.3.2) exactly as the `yaml` package resolves
// plain scalars by default, and the core tags a manifest may write explicitly (!!str, !!int, ...).
// No regular expressions: compiling one costs more at start-up than reading a whole manifest (BENCH.md).
import { YamlError } from './errors.ts';

/** A plain scalar's value: null, bool, int (decimal, 0o octal, 0x hex), float (fixed, exp, .inf, .nan), else the string. */
export function resolvePlain(s: string): unknown {
  const c = s.charCodeAt(0);
  switch (s) {
    case '':
    case '~':
    case 'null':
    case 'Null':
    case 'NULL':
      return null;
    case 'true':
    case 'True':
    case 'TRUE':
      return true;
    case 'false':
    case 'False':
    case 'FALSE':
      return false;
  }
  // Every number starts with a digit, a sign or a dot.
  if (!((c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2d || c === 0x2e)) return s;
  if (c === 0x30 && s.length > 2) {
    if (s[1] === 'o' && isDigits(s, 2, 0x37)) return parseInt(s.substring(2), 8); // /^0o[0-7]+$/
    if (s[1] === 'x' && isHex(s, 2)) return parseInt(s.substring(2), 16); // /^0x[0-9a-fA-F]+$/
  }
  let i = c === 0x2b || c === 0x2d ? 1 : 0;
  // /^[-+]?\.(?:inf|Inf|INF)$/ and /^\.(?:nan|NaN|NAN)$/
  if (s[i] === '.') {
    const rest = s.substring(i + 1);
    if (rest === 'inf' || rest === 'Inf' || rest === 'INF') return c === 0x2d ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
    if (i === 0 && (rest === 'nan' || rest === 'NaN' || rest === 'NAN')) return NaN;
  }
  const intStart = i;
  while (isDigit(s.charCodeAt(i))) i++;
  const intDigits = i - intStart;
  if (i === s.length) return intDigits > 0 ? parseInt(s, 10) : s; // /^[-+]?[0-9]+$/
  let fracDigits = -1; // -1: no dot
  if (s[i] === '.') {
    const fracStart = ++i;
    while (isDigit(s.charCodeAt(i))) i++;
    fracDigits = i - fracStart;
  }
  // Mantissa: /\.[0-9]+/ or /[0-9]+(\.[0-9]*)?/
  if (!(intDigits > 0 || fracDigits > 0)) return s;
  if (i === s.length) return fracDigits >= 0 ? parseFloat(s) : s; // /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/
  if (s[i] !== 'e' && s[i] !== 'E') return s;
  i++;
  if (s[i] === '+' || s[i] === '-') i++;
  // /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/
  return i < s.length && isDigits(s, i, 0x39) ? parseFloat(s) : s;
}

/** True when `s` is written as a core-schema int (decimal, 0o, 0x), i.e. what !!int accepts. */
function isIntText(s: string): boolean {
  if (s.length > 2 && s[0] === '0' && (s[1] === 'o' || s[1] === 'x')) return s[1] === 'o' ? isDigits(s, 2, 0x37) : isHex(s, 2);
  const from = s[0] === '-' || s[0] === '+' ? 1 : 0;
  return isDigits(s, from, 0x39);
}

/**
 * The value of a scalar with an explicit core tag (`str`, `int`, `float`, `bool`, `null`, or `!` the
 * non-specific tag, which makes any scalar a string: YAML 1.2.2 §6.9.1). A value the tag cannot
 * hold (`!!int abc`) is an error: `yaml` only warns and keeps a string, which would hide the mistake.
 */
export function resolveTagged(tag: string, text: string, offset: number): unknown {
  if (tag === '!' || tag === 'str') return text;
  const v = resolvePlain(text);
  switch (tag) {
    case 'null':
      if (v === null) return null;
      break;
    case 'bool':
      if (typeof v === 'boolean') return v;
      break;
    case 'int':
      if (typeof v === 'number' && isIntText(text)) return v;
      break;
    case 'float':
      if (typeof v === 'number' && !isIntText(text)) return v;
      break;
  }
  throw new YamlError(`the value ${JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text)} is not a valid !!${tag}`, offset);
}

/** Double-quoted single-character escapes (YAML 1.2.2 §5.7); \x \u \U are handled by the scanner. */
export const ESCAPES: Record<string, string> = {
  '0': '\0',
  a: '\x07',
  b: '\b',
  t: '\t',
  '\t': '\t',
  n: '\n',
  v: '\v',
  f: '\f',
  r: '\r',
  e: '\x1b',
  ' ': ' ',
  '"': '"',
  '/': '/',
  '\\': '\\',
  N: '\u0085',
  _: '\u00a0',
  L: '\u2028',
  P: '\u2029',
};

export function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** s[from..] is non-empty and all digits from 0 to `max` (a char code: 0x37 for octal, 0x39 for decimal). */
function isDigits(s: string, from: number, max: number): boolean {
  if (from >= s.length) return false;
  for (let i = from; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x30 || c > max) return false;
  }
  return true;
}

export function isHex(s: string, from: number, to = s.length): boolean {
  if (from >= to || to > s.length) return false;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (!((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66))) return false;
  }
  return true;
}
