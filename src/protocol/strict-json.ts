// A strict JSON parser for model output (FemtoClaw §4: "valid UTF-8 encoded JSON objects"; §9).
// JSON.parse is not strict enough: it keeps the last of duplicate keys, accepts lone surrogates
// (raw and \u-escaped) and nests until the stack runs out. This parser rejects all of those, a
// byte-order mark, invalid UTF-8 (byte input), oversized input, excessive nesting and anything
// after the value. It never repairs. Whitespace (RFC 8259 ws: space, tab, LF, CR) around the value
// is part of a JSON text and accepted. docs/femtoclaw.md "Strict JSON".
import { utf8Length } from './utf8.ts';

export type StrictJsonCode =
  | 'empty'
  | 'bom'
  | 'invalid_utf8'
  | 'lone_surrogate'
  | 'too_large'
  | 'too_deep'
  | 'duplicate_key'
  | 'trailing_data'
  | 'syntax'
  | 'unterminated_string'
  | 'bad_escape'
  | 'control_char'
  | 'bad_number';

export interface StrictJsonLimits {
  /** Largest input in UTF-8 bytes. */
  maxBytes: number;
  /** Deepest nesting of objects and arrays (`{}` is depth 1, a scalar depth 0). Clamped to 1000. */
  maxDepth: number;
}

/** A model answer is a short JSON object; 64 KiB and 32 levels leave room for real tool arguments. */
export const DEFAULT_JSON_LIMITS: StrictJsonLimits = { maxBytes: 65536, maxDepth: 32 };
/** The parser recurses once per level; this keeps any configured limit far from the stack's end. */
export const MAX_DEPTH_CEILING = 1000;

export type StrictJsonResult =
  | { ok: true; value: unknown }
  | {
      ok: false;
      code: StrictJsonCode;
      /**
       * Where it failed: a UTF-16 index into the (decoded) text, except for `invalid_utf8` and
       * `too_large` on byte input, where it is a byte offset.
       */
      pos: number;
      message: string;
    };

class Fail {
  constructor(
    readonly code: StrictJsonCode,
    readonly pos: number,
    readonly message: string,
  ) {}
}

const decoder = /* @__PURE__ */ new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Parse `input` (UTF-8 bytes, or a string already decoded) strictly; never throws. */
export function parseStrictJson(input: string | Uint8Array, limits: Partial<StrictJsonLimits> = {}): StrictJsonResult {
  const maxBytes = limits.maxBytes ?? DEFAULT_JSON_LIMITS.maxBytes;
  const maxDepth = Math.min(limits.maxDepth ?? DEFAULT_JSON_LIMITS.maxDepth, MAX_DEPTH_CEILING);
  let text: string;
  if (typeof input === 'string') {
    if (input.length * 3 > maxBytes && utf8Length(input, maxBytes) > maxBytes) return fail('too_large', maxBytes, `input exceeds ${maxBytes} bytes`);
    text = input;
    if (text.charCodeAt(0) === 0xfeff) return fail('bom', 0, 'byte-order mark before the JSON');
  } else {
    if (input.length > maxBytes) return fail('too_large', maxBytes, `input exceeds ${maxBytes} bytes`);
    if (input[0] === 0xef && input[1] === 0xbb && input[2] === 0xbf) return fail('bom', 0, 'byte-order mark before the JSON');
    try {
      text = decoder.decode(input);
    } catch {
      return fail('invalid_utf8', firstInvalidUtf8(input), 'invalid UTF-8');
    }
  }
  try {
    return { ok: true, value: parseText(text, maxDepth) };
  } catch (e) {
    if (e instanceof Fail) return fail(e.code, e.pos, e.message);
    throw e;
  }
}

function fail(code: StrictJsonCode, pos: number, message: string): StrictJsonResult {
  return { ok: false, code, pos, message };
}

/** Byte offset of the first ill-formed UTF-8 sequence (only called once decoding has failed). */
export function firstInvalidUtf8(b: Uint8Array): number {
  let i = 0;
  while (i < b.length) {
    const c = b[i];
    let n: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (c < 0x80) n = 0;
    else if (c >= 0xc2 && c <= 0xdf) n = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      n = 2;
      if (c === 0xe0) lo = 0xa0;
      if (c === 0xed) hi = 0x9f; // encoded surrogates are not UTF-8
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3;
      if (c === 0xf0) lo = 0x90;
      if (c === 0xf4) hi = 0x8f;
    } else return i;
    for (let k = 1; k <= n; k++) {
      const x = b[i + k];
      if (x === undefined || x < (k === 1 ? lo : 0x80) || x > (k === 1 ? hi : 0xbf)) return i;
    }
    i += n + 1;
  }
  return b.length;
}

const hasOwn = Object.prototype.hasOwnProperty;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const ESCAPES: Record<number, string> = { 0x22: '"', 0x5c: '\\', 0x2f: '/', 0x62: '\b', 0x66: '\f', 0x6e: '\n', 0x72: '\r', 0x74: '\t' };

/** Recursive descent over `s`; closures rather than a class so the minifier can shorten every name. */
function parseText(s: string, maxDepth: number): unknown {
  let i = 0;
  const ws = () => {
    for (let c = s.charCodeAt(i); c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = s.charCodeAt(++i));
  };

  const value = (depth: number): unknown => {
    const c = s.charCodeAt(i);
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (depth >= maxDepth) throw new Fail('too_deep', i, `nesting deeper than ${maxDepth}`);
      i++;
      ws();
      return c === 0x7b ? object(depth + 1) : array(depth + 1);
    }
    if (c === 0x22 /* " */) return string();
    if (c === 0x2d /* - */ || isDigit(c)) return number();
    for (const [w, v] of LITERALS) {
      if (s.startsWith(w, i)) {
        i += w.length;
        return v;
      }
    }
    throw new Fail('syntax', i, i >= s.length ? 'unexpected end of input' : 'expected a JSON value');
  };

  const object = (depth: number): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    if (s.charCodeAt(i) === 0x7d /* } */) {
      i++;
      return out;
    }
    for (;;) {
      if (s.charCodeAt(i) !== 0x22) throw new Fail('syntax', i, 'expected a string key');
      const at = i;
      const key = string();
      if (hasOwn.call(out, key)) throw new Fail('duplicate_key', at, 'duplicate key in an object');
      ws();
      if (s.charCodeAt(i) !== 0x3a /* : */) throw new Fail('syntax', i, "expected ':'");
      i++;
      ws();
      const v = value(depth);
      // "__proto__" as a plain assignment would set the prototype; JSON.parse makes it an own key.
      if (key === '__proto__') Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
      else out[key] = v;
      ws();
      const c = s.charCodeAt(i++);
      if (c === 0x7d) return out;
      if (c !== 0x2c /* , */) throw new Fail('syntax', i - 1, "expected ',' or '}'");
      ws();
    }
  };

  const array = (depth: number): unknown[] => {
    const out: unknown[] = [];
    if (s.charCodeAt(i) === 0x5d /* ] */) {
      i++;
      return out;
    }
    for (;;) {
      out.push(value(depth));
      ws();
      const c = s.charCodeAt(i++);
      if (c === 0x5d) return out;
      if (c !== 0x2c) throw new Fail('syntax', i - 1, "expected ',' or ']'");
      ws();
    }
  };

  const number = (): number => {
    const start = i;
    const digits = (what: string) => {
      if (!isDigit(s.charCodeAt(i))) throw new Fail('bad_number', start, `expected digits${what}`);
      while (isDigit(s.charCodeAt(i))) i++;
    };
    if (s.charCodeAt(i) === 0x2d) i++;
    if (s.charCodeAt(i) === 0x30) {
      i++;
      if (isDigit(s.charCodeAt(i))) throw new Fail('bad_number', start, 'leading zero in a number');
    } else digits('');
    if (s.charCodeAt(i) === 0x2e /* . */) {
      i++;
      digits(' after the decimal point');
    }
    const e = s.charCodeAt(i);
    if (e === 0x65 || e === 0x45) {
      const sign = s.charCodeAt(++i);
      if (sign === 0x2b || sign === 0x2d) i++;
      digits(' in the exponent');
    }
    return Number(s.slice(start, i));
  };

  const hex4 = (at: number): number => {
    const h = s.slice(at + 2, at + 6);
    if (!/^[0-9a-fA-F]{4}$/.test(h)) throw new Fail('bad_escape', at, 'invalid \\u escape');
    return parseInt(h, 16);
  };

  const string = (): string => {
    const start = i;
    let out = '';
    let chunk = ++i;
    for (;;) {
      if (i >= s.length) throw new Fail('unterminated_string', start, 'unterminated string');
      const c = s.charCodeAt(i);
      if (c === 0x22) {
        out += s.slice(chunk, i++);
        return out;
      }
      if (c < 0x20) throw new Fail('control_char', i, 'unescaped control character in a string');
      if (c === 0x5c /* \ */) {
        out += s.slice(chunk, i);
        const e = s.charCodeAt(i + 1);
        if (e === 0x75 /* u */) {
          const u = hex4(i);
          if (u >= 0xdc00 && u <= 0xdfff) throw new Fail('lone_surrogate', i, 'lone surrogate escape');
          if (u >= 0xd800 && u <= 0xdbff) {
            // A high surrogate must be followed by an escaped low surrogate (a raw one is never valid here).
            const lo = s.charCodeAt(i + 6) === 0x5c && s.charCodeAt(i + 7) === 0x75 ? hex4(i + 6) : 0;
            if (lo < 0xdc00 || lo > 0xdfff) throw new Fail('lone_surrogate', i, 'lone surrogate escape');
            out += String.fromCharCode(u, lo);
            i += 12;
          } else {
            out += String.fromCharCode(u);
            i += 6;
          }
        } else {
          const t = ESCAPES[e];
          if (t === undefined) throw new Fail(i + 1 >= s.length ? 'unterminated_string' : 'bad_escape', i, 'invalid escape sequence');
          out += t;
          i += 2;
        }
        chunk = i;
        continue;
      }
      if (c >= 0xd800 && c <= 0xdfff) {
        if (c >= 0xdc00 || (s.charCodeAt(i + 1) & 0xfc00) !== 0xdc00) throw new Fail('lone_surrogate', i, 'lone surrogate in a string');
        i++;
      }
      i++;
    }
  };

  ws();
  if (i >= s.length) throw new Fail('empty', i, 'no JSON value');
  const v = value(0);
  ws();
  if (i < s.length) throw new Fail('trailing_data', i, 'data after the JSON value');
  return v;
}

const LITERALS: [string, unknown][] = [
  ['true', true],
  ['false', false],
  ['null', null],
];
