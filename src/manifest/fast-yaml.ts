// A fast path for reading manifests without the `yaml` package, whose code is cold at start-up and
// costs several milliseconds for a 20-line file. Two strict readers:
//   - JSON text: JSON.parse, plus a duplicate-key scan (YAML with uniqueKeys rejects duplicates,
//     JSON.parse would keep the last value).
//   - the YAML subset manifests use: block mappings and sequences, single-line flow mappings and
//     sequences, plain / 'single' / "double" quoted single-line scalars typed with the YAML 1.2 core
//     schema exactly as `yaml` resolves them, comments, a leading `---`.
// Both answer `undefined` for anything they are not certain about (anchors, aliases, tags, block
// scalars, multi-line scalars or flow collections, complex or non-string keys, directives, several
// documents, tabs, odd characters, duplicate keys, any syntax error…): the caller then parses with
// `yaml` as before, so errors, positions and every edge case keep their old behaviour.
// The contract — a value is returned only when it deep-equals `parseDocument(text).toJS()` and that
// document has no errors — is checked differentially by test/unit/fast-yaml.test.ts.

/** Thrown inside the YAML reader to give up; never escapes this module. */
const BAIL = { bail: true };

/**
 * True when the text has a character the fast readers leave to `yaml`: C0 controls (a tab too
 * unless `tabOk`: YAML's indentation rules), DEL and C1, line/paragraph separators, a BOM,
 * non-characters, or a CR not followed by LF. (No regular expressions in this module: compiling
 * one costs more at start-up than reading a whole manifest.)
 */
function hasOddChar(text: string, tabOk: boolean): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x20 && c < 0x7f) continue;
    if (c === 0x0a) continue;
    if (c === 0x0d) {
      if (text.charCodeAt(i + 1) === 0x0a) continue;
      return true;
    }
    if (c === 0x09 && tabOk) continue;
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || c === 0x2028 || c === 0x2029 || c === 0xfeff || c === 0xfffe || c === 0xffff) return true;
  }
  return false;
}

/** The document's value, or undefined when the `yaml` package must decide. */
export function fastParse(text: string): { value: unknown } | undefined {
  let i = 0;
  while (i < text.length && (text[i] === ' ' || text[i] === '\n' || text[i] === '\r' || text[i] === '\t')) i++;
  if ((text[i] === '{' || text[i] === '[') && !hasOddChar(text, true)) {
    const j = parseJson(text);
    if (j) return j;
  }
  if (hasOddChar(text, false)) return undefined;
  try {
    return { value: new BlockReader(text).document() };
  } catch (e) {
    if (e === BAIL) return undefined;
    throw e;
  }
}

// ---------- JSON ----------

function parseJson(text: string): { value: unknown } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return uniqueJsonKeys(text) ? { value } : undefined;
}

/** True when no object in this (valid) JSON text repeats a key. */
function uniqueJsonKeys(text: string): boolean {
  const stack: (Set<string> | undefined)[] = [];
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let j = i + 1;
      let escaped = false;
      for (;;) {
        const d = text.charCodeAt(j);
        if (d === 0x22) break;
        if (d === 0x5c /* \ */) {
          escaped = true;
          j += 2;
        } else j++;
      }
      const keys = stack[stack.length - 1];
      if (keys) {
        let k = j + 1;
        while (k < n) {
          const w = text.charCodeAt(k);
          if (w !== 0x20 && w !== 0x0a && w !== 0x0d && w !== 0x09) break;
          k++;
        }
        if (text.charCodeAt(k) === 0x3a /* : */) {
          const key = escaped ? (JSON.parse(text.slice(i, j + 1)) as string) : text.slice(i + 1, j);
          if (keys.has(key)) return false;
          keys.add(key);
        }
      }
      i = j;
    } else if (c === 0x7b /* { */) stack.push(new Set());
    else if (c === 0x5b /* [ */) stack.push(undefined);
    else if (c === 0x7d /* } */ || c === 0x5d /* ] */) stack.pop();
  }
  return true;
}

// ---------- YAML subset ----------

/** Plain scalars cannot start with these (YAML c-indicator); `-` is handled separately. */
const INDICATOR = new Set(['?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', "'", '"', '%', '@', '`']);
const MAX_FLOW_DEPTH = 64;
const MAX_BLOCK_DEPTH = 64;
/** `yaml` limits implicit keys to 1024 characters; stay clear of the boundary. */
const MAX_KEY = 1000;

class BlockReader {
  private readonly lines: string[];
  private li = 0;
  private started = false;
  private depth = 0;

  constructor(text: string) {
    this.lines = text.split('\n');
    for (let i = 0; i < this.lines.length; i++) {
      const l = this.lines[i];
      if (l.charCodeAt(l.length - 1) === 0x0d) this.lines[i] = l.slice(0, -1);
    }
  }

  document(): unknown {
    let ind = this.skip();
    if (ind === -1) return null;
    const first = this.lines[this.li];
    if (ind === 0 && (first[0] === '%' || first.startsWith('...'))) throw BAIL;
    if (ind === 0 && first.startsWith('---')) {
      const p = spaces(first, 3);
      if (p === 3 && first.length > 3) throw BAIL; // `---x`
      if (p < first.length && first[p] !== '#') throw BAIL; // content on the `---` line
      this.li++;
      this.started = true;
      ind = this.skip();
      if (ind === -1) return null;
    }
    this.started = true;
    const value = this.node(ind);
    if (this.skip() !== -1) throw BAIL;
    return value;
  }

  /**
   * Move to the next line with content (skipping blank and comment lines); its indentation, or -1
   * at the end. Document markers and directives after the start are left to `yaml`.
   */
  private skip(): number {
    const lines = this.lines;
    for (; this.li < lines.length; this.li++) {
      const l = lines[this.li];
      const p = spaces(l, 0);
      if (p === l.length || l[p] === '#') continue;
      if (this.started && p === 0 && (l[0] === '%' || l.startsWith('---') || l.startsWith('...'))) throw BAIL;
      return p;
    }
    return -1;
  }

  /** A node starting at column `col` of the current line (which may follow `- ` on that line). */
  private node(col: number): unknown {
    const line = this.lines[this.li];
    if (isSeqIndicator(line, col)) return this.nested(() => this.seq(col));
    if (this.key(line, col)) return this.nested(() => this.map(col));
    return this.inline(line, col);
  }

  /** Deep block nesting is left to `yaml` and the depth checks after it, as before. */
  private nested<T>(read: () => T): T {
    if (++this.depth > MAX_BLOCK_DEPTH) throw BAIL;
    const v = read();
    this.depth--;
    return v;
  }

  private seq(n: number): unknown[] {
    const arr: unknown[] = [];
    for (;;) {
      const line = this.lines[this.li];
      if (!isSeqIndicator(line, n)) throw BAIL;
      const p = spaces(line, n + 1);
      if (p === line.length || line[p] === '#') {
        this.li++;
        const ind = this.skip();
        arr.push(ind > n ? this.node(ind) : null);
      } else arr.push(this.node(p));
      const ind = this.skip();
      if (ind === -1 || ind < n) return arr;
      if (ind > n) throw BAIL;
      if (!isSeqIndicator(this.lines[this.li], n)) return arr; // the mapping this sequence is a value of goes on
    }
  }

  private map(n: number): Record<string, unknown> {
    const obj: Record<string, unknown> = {};
    for (;;) {
      const line = this.lines[this.li];
      const k = this.key(line, n);
      if (!k) throw BAIL;
      if (Object.prototype.hasOwnProperty.call(obj, k.key)) throw BAIL; // duplicate: `yaml` reports it with a position
      const p = spaces(line, k.after);
      let value: unknown;
      if (p === line.length || line[p] === '#') {
        this.li++;
        const ind = this.skip();
        if (ind > n) value = this.node(ind);
        else if (ind === n && isSeqIndicator(this.lines[this.li], n)) value = this.seq(n);
        else value = null;
      } else value = this.inline(line, p);
      setKey(obj, k.key, value);
      const ind = this.skip();
      if (ind === -1 || ind < n) return obj;
      if (ind > n) throw BAIL;
    }
  }

  /** `key:` at `col` (followed by a space or the end of the line): the key and the offset after the colon; undefined when this is no key. */
  private key(line: string, col: number): { key: string; after: number } | undefined {
    const c = line[col];
    if (c === '"' || c === "'") {
      const q = c === '"' ? doubleQuoted(line, col) : singleQuoted(line, col);
      const p = spaces(line, q.end);
      if (line[p] !== ':') return undefined;
      if (p + 1 < line.length && line[p + 1] !== ' ') throw BAIL;
      if (p - col > MAX_KEY) throw BAIL;
      return { key: q.value, after: p + 1 };
    }
    if (c === '[' || c === '{') return undefined; // a flow collection (a complex key after it is refused by inline())
    for (let i = col; i < line.length; i++) {
      const ch = line[i];
      if (ch === ':' && (i + 1 === line.length || line[i + 1] === ' ')) {
        const text = line.slice(col, trimEnd(line, i));
        if (text.length === 0 || text.length > MAX_KEY || INDICATOR.has(text[0]) || text[0] === '-' || text === '<<') throw BAIL;
        for (let j = 0; j < text.length; j++) if (FLOW_CHARS.includes(text[j])) throw BAIL;
        if (resolvePlain(text) !== text) throw BAIL; // a null, bool or number key
        return { key: text, after: i + 1 };
      }
      if (ch === '#' && i > col && line[i - 1] === ' ') return undefined;
    }
    return undefined;
  }

  /** A scalar or flow collection that must end on this line (then a comment at most); advances to the next line. */
  private inline(line: string, p: number): unknown {
    const c = line[p];
    let value: unknown;
    let end: number;
    if (c === '"' || c === "'") {
      const q = c === '"' ? doubleQuoted(line, p) : singleQuoted(line, p);
      value = q.value;
      end = q.end;
    } else if (c === '[' || c === '{') {
      const f = flow(line, p, 1);
      value = f.value;
      end = f.end;
    } else {
      if (INDICATOR.has(c) || (c === '-' && (p + 1 === line.length || line[p + 1] === ' '))) throw BAIL;
      end = line.length;
      for (let i = p + 1; i < line.length; i++) {
        if (line[i] === '#' && line[i - 1] === ' ') {
          end = i;
          break;
        }
      }
      const text = line.slice(p, trimEnd(line, end));
      if (text.endsWith(':') || text.includes(': ')) throw BAIL; // a mapping on the same line: an error in YAML
      value = resolvePlain(text);
      end = line.length;
    }
    const q = spaces(line, end);
    if (q < line.length && !(line[q] === '#' && q > end)) throw BAIL;
    this.li++;
    return value;
  }
}

const FLOW_CHARS = ',[]{}';

function isSeqIndicator(line: string, col: number): boolean {
  return line[col] === '-' && (col + 1 === line.length || line[col + 1] === ' ');
}

function spaces(line: string, i: number): number {
  while (i < line.length && line.charCodeAt(i) === 0x20) i++;
  return i;
}

function trimEnd(line: string, end: number): number {
  while (end > 0 && line.charCodeAt(end - 1) === 0x20) end--;
  return end;
}

/** What `yaml`'s toJS does with a pair: an own data property, `__proto__` included. */
function setKey(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  else obj[key] = value;
}

/** A single-line flow collection `[…]` / `{…}` at `p`; its value and the offset after the closing bracket. */
function flow(line: string, p: number, depth: number): { value: unknown; end: number } {
  if (depth > MAX_FLOW_DEPTH) throw BAIL;
  if (line[p] === '[') {
    const arr: unknown[] = [];
    p = spaces(line, p + 1);
    if (line[p] === ']') return { value: arr, end: p + 1 };
    for (;;) {
      const item = flowNode(line, p, depth);
      arr.push(item.value);
      p = spaces(line, item.end);
      if (line[p] === ']') return { value: arr, end: p + 1 };
      if (line[p] !== ',') throw BAIL;
      p = spaces(line, p + 1);
      if (line[p] === ']') throw BAIL; // trailing comma
    }
  }
  const obj: Record<string, unknown> = {};
  p = spaces(line, p + 1);
  if (line[p] === '}') return { value: obj, end: p + 1 };
  for (;;) {
    let key: string;
    const c = line[p];
    if (c === '"' || c === "'") {
      const q = c === '"' ? doubleQuoted(line, p) : singleQuoted(line, p);
      key = q.value;
      p = spaces(line, q.end);
      if (line[p] !== ':') throw BAIL;
      p++;
    } else {
      const start = p;
      if (c === undefined || INDICATOR.has(c) || c === '-') throw BAIL;
      for (;;) {
        const ch = line[p];
        if (ch === undefined || FLOW_CHARS.includes(ch) || (ch === '#' && line[p - 1] === ' ')) throw BAIL;
        if (ch === ':' && line[p + 1] === ' ') break;
        p++;
      }
      key = line.slice(start, trimEnd(line, p));
      if (key.length > MAX_KEY || key === '<<' || resolvePlain(key) !== key) throw BAIL;
      p += 2;
    }
    if (Object.prototype.hasOwnProperty.call(obj, key)) throw BAIL;
    p = spaces(line, p);
    if (line[p] === ',' || line[p] === '}') throw BAIL; // empty value
    const item = flowNode(line, p, depth);
    setKey(obj, key, item.value);
    p = spaces(line, item.end);
    if (line[p] === '}') return { value: obj, end: p + 1 };
    if (line[p] !== ',') throw BAIL;
    p = spaces(line, p + 1);
    if (line[p] === '}') throw BAIL;
  }
}

function flowNode(line: string, p: number, depth: number): { value: unknown; end: number } {
  const c = line[p];
  if (c === '[' || c === '{') return flow(line, p, depth + 1);
  if (c === '"') return doubleQuoted(line, p);
  if (c === "'") return singleQuoted(line, p);
  if (c === undefined || INDICATOR.has(c) || (c === '-' && (p + 1 === line.length || ' ,]}'.includes(line[p + 1])))) throw BAIL;
  const start = p;
  for (;;) {
    const ch = line[p];
    if (ch === undefined || ch === '[' || ch === '{' || (ch === '#' && line[p - 1] === ' ')) throw BAIL;
    if (ch === ',' || ch === ']' || ch === '}') break;
    if (ch === ':') {
      const nx = line[p + 1];
      if (nx === undefined || nx === ' ' || nx === ',' || nx === ']' || nx === '}') throw BAIL; // a pair or an empty value
    }
    p++;
  }
  const end = trimEnd(line, p);
  return { value: resolvePlain(line.slice(start, end)), end };
}

function singleQuoted(line: string, p: number): { value: string; end: number } {
  let out = '';
  let from = p + 1;
  for (let i = p + 1; i < line.length; i++) {
    if (line[i] !== "'") continue;
    if (line[i + 1] === "'") {
      out += line.slice(from, i + 1);
      from = i + 2;
      i++;
      continue;
    }
    return { value: out + line.slice(from, i), end: i + 1 };
  }
  throw BAIL; // continues on the next line
}

const ESCAPES: Record<string, string> = {
  '0': '\0',
  a: '\x07',
  b: '\b',
  e: '\x1b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  N: '\u0085',
  _: '\u00a0',
  L: '\u2028',
  P: '\u2029',
  ' ': ' ',
  '"': '"',
  '/': '/',
  '\\': '\\',
};

function doubleQuoted(line: string, p: number): { value: string; end: number } {
  let out = '';
  let from = p + 1;
  for (let i = p + 1; i < line.length; i++) {
    const ch = line[i];
    if (ch === '"') return { value: out + line.slice(from, i), end: i + 1 };
    if (ch !== '\\') continue;
    out += line.slice(from, i);
    const e = line[i + 1];
    const simple = e === undefined ? undefined : ESCAPES[e];
    if (simple !== undefined) {
      out += simple;
      i++;
    } else if (e === 'x' || e === 'u' || e === 'U') {
      const len = e === 'x' ? 2 : e === 'u' ? 4 : 8;
      const hex = line.substr(i + 2, len);
      if (hex.length !== len || !isHex(hex, 0)) throw BAIL;
      const code = parseInt(hex, 16);
      if (code > 0x10ffff) throw BAIL;
      out += String.fromCodePoint(code);
      i += 1 + len;
    } else throw BAIL; // an invalid escape, or a line continuation
    from = i + 1;
  }
  throw BAIL; // continues on the next line
}

/** A plain scalar's value under the YAML 1.2 core schema, exactly as `yaml` resolves it (null, bool, int oct/dec/hex, float nan/inf/exp/fixed, else the string). */
export function resolvePlain(s: string): unknown {
  const c = s.charCodeAt(0);
  switch (s) {
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

function isDigit(c: number): boolean {
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

function isHex(s: string, from: number): boolean {
  if (from >= s.length) return false;
  for (let i = from; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66))) return false;
  }
  return true;
}
