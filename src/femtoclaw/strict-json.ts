// A strict JSON parser for model output (FemtoClaw §4: "valid UTF-8 encoded JSON objects"; §9).
// JSON.parse is not strict enough: it keeps the last of duplicate keys, accepts lone surrogates
// (raw and \u-escaped) and nests until the stack runs out. This parser rejects all of those, a
// byte-order mark, invalid UTF-8 (byte input), oversized input, excessive nesting and anything
// after the value. It never repairs. Whitespace (RFC 8259 ws: space, tab, LF, CR) around the value
// is part of a JSON text and accepted. docs/femtoclaw.md "Strict JSON".

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
    const p = new Parser(text, maxDepth);
    p.ws();
    if (p.i >= text.length) throw new Fail('empty', p.i, 'no JSON value');
    const value = p.value(0);
    p.ws();
    if (p.i < text.length) throw new Fail('trailing_data', p.i, 'data after the JSON value');
    return { ok: true, value };
  } catch (e) {
    if (e instanceof Fail) return fail(e.code, e.pos, e.message);
    throw e;
  }
}

function fail(code: StrictJsonCode, pos: number, message: string): StrictJsonResult {
  return { ok: false, code, pos, message };
}

/** UTF-8 length of a string, counting stops early once past `stopAbove`. */
function utf8Length(s: string, stopAbove: number): number {
  let n = 0;
  for (let i = 0; i < s.length && n <= stopAbove; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
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

class Parser {
  i = 0;

  constructor(
    private readonly s: string,
    private readonly maxDepth: number,
  ) {}

  ws(): void {
    const s = this.s;
    let i = this.i;
    for (;;) {
      const c = s.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else break;
    }
    this.i = i;
  }

  value(depth: number): unknown {
    const s = this.s;
    const c = s.charCodeAt(this.i);
    if (c === 0x7b /* { */) return this.object(depth + 1);
    if (c === 0x5b /* [ */) return this.array(depth + 1);
    if (c === 0x22 /* " */) return this.string();
    if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) return this.number();
    if (s.startsWith('true', this.i)) return this.literal(4, true);
    if (s.startsWith('false', this.i)) return this.literal(5, false);
    if (s.startsWith('null', this.i)) return this.literal(4, null);
    if (this.i >= s.length) throw new Fail('syntax', this.i, 'unexpected end of input');
    throw new Fail('syntax', this.i, 'expected a JSON value');
  }

  private literal(n: number, v: boolean | null): boolean | null {
    this.i += n;
    return v;
  }

  private enter(depth: number): void {
    if (depth > this.maxDepth) throw new Fail('too_deep', this.i, `nesting deeper than ${this.maxDepth}`);
    this.i++;
    this.ws();
  }

  private object(depth: number): Record<string, unknown> {
    this.enter(depth);
    const out: Record<string, unknown> = {};
    const s = this.s;
    if (s.charCodeAt(this.i) === 0x7d /* } */) {
      this.i++;
      return out;
    }
    for (;;) {
      if (s.charCodeAt(this.i) !== 0x22) throw new Fail('syntax', this.i, 'expected a string key');
      const at = this.i;
      const key = this.string();
      if (hasOwn.call(out, key)) throw new Fail('duplicate_key', at, 'duplicate key in an object');
      this.ws();
      if (s.charCodeAt(this.i) !== 0x3a /* : */) throw new Fail('syntax', this.i, "expected ':'");
      this.i++;
      this.ws();
      const v = this.value(depth);
      // "__proto__" as a plain assignment would set the prototype; JSON.parse makes it an own key.
      if (key === '__proto__') Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
      else out[key] = v;
      this.ws();
      const c = s.charCodeAt(this.i);
      if (c === 0x2c /* , */) {
        this.i++;
        this.ws();
      } else if (c === 0x7d) {
        this.i++;
        return out;
      } else throw new Fail('syntax', this.i, "expected ',' or '}'");
    }
  }

  private array(depth: number): unknown[] {
    this.enter(depth);
    const out: unknown[] = [];
    const s = this.s;
    if (s.charCodeAt(this.i) === 0x5d /* ] */) {
      this.i++;
      return out;
    }
    for (;;) {
      out.push(this.value(depth));
      this.ws();
      const c = s.charCodeAt(this.i);
      if (c === 0x2c) {
        this.i++;
        this.ws();
      } else if (c === 0x5d) {
        this.i++;
        return out;
      } else throw new Fail('syntax', this.i, "expected ',' or ']'");
    }
  }

  private number(): number {
    const s = this.s;
    const start = this.i;
    let i = start;
    if (s.charCodeAt(i) === 0x2d) i++;
    const d0 = s.charCodeAt(i);
    if (d0 === 0x30) {
      i++;
      if (isDigit(s.charCodeAt(i))) throw new Fail('bad_number', start, 'leading zero in a number');
    } else if (d0 >= 0x31 && d0 <= 0x39) while (isDigit(s.charCodeAt(i))) i++;
    else throw new Fail('bad_number', start, 'expected digits');
    if (s.charCodeAt(i) === 0x2e /* . */) {
      i++;
      if (!isDigit(s.charCodeAt(i))) throw new Fail('bad_number', start, 'expected digits after the decimal point');
      while (isDigit(s.charCodeAt(i))) i++;
    }
    const e = s.charCodeAt(i);
    if (e === 0x65 || e === 0x45) {
      i++;
      const sign = s.charCodeAt(i);
      if (sign === 0x2b || sign === 0x2d) i++;
      if (!isDigit(s.charCodeAt(i))) throw new Fail('bad_number', start, 'expected digits in the exponent');
      while (isDigit(s.charCodeAt(i))) i++;
    }
    this.i = i;
    return Number(s.slice(start, i));
  }

  private string(): string {
    const s = this.s;
    const start = this.i;
    let i = start + 1;
    let out = '';
    let chunk = i;
    for (;;) {
      if (i >= s.length) throw new Fail('unterminated_string', start, 'unterminated string');
      const c = s.charCodeAt(i);
      if (c === 0x22) {
        this.i = i + 1;
        return chunk === start + 1 ? s.slice(chunk, i) : out + s.slice(chunk, i);
      }
      if (c < 0x20) throw new Fail('control_char', i, 'unescaped control character in a string');
      if (c === 0x5c /* \ */) {
        out += s.slice(chunk, i);
        const [text, next] = this.escape(i);
        out += text;
        i = next;
        chunk = i; // never start + 1 again, so the return below knows `out` is in use
        continue;
      }
      if (c >= 0xd800 && c <= 0xdfff) {
        if (c >= 0xdc00 || (s.charCodeAt(i + 1) & 0xfc00) !== 0xdc00) throw new Fail('lone_surrogate', i, 'lone surrogate in a string');
        i += 2;
        continue;
      }
      i++;
    }
  }

  /** One escape at `i` (the backslash): its text and the index after it. */
  private escape(i: number): [string, number] {
    const s = this.s;
    const c = s.charCodeAt(i + 1);
    switch (c) {
      case 0x22:
        return ['"', i + 2];
      case 0x5c:
        return ['\\', i + 2];
      case 0x2f:
        return ['/', i + 2];
      case 0x62:
        return ['\b', i + 2];
      case 0x66:
        return ['\f', i + 2];
      case 0x6e:
        return ['\n', i + 2];
      case 0x72:
        return ['\r', i + 2];
      case 0x74:
        return ['\t', i + 2];
      case 0x75: {
        const u = this.hex4(i);
        if (u >= 0xdc00 && u <= 0xdfff) throw new Fail('lone_surrogate', i, 'lone surrogate escape');
        if (u >= 0xd800 && u <= 0xdbff) {
          // A high surrogate must be followed by an escaped low surrogate (a raw one is never valid here).
          if (s.charCodeAt(i + 6) !== 0x5c || s.charCodeAt(i + 7) !== 0x75) throw new Fail('lone_surrogate', i, 'lone surrogate escape');
          const lo = this.hex4(i + 6);
          if (lo < 0xdc00 || lo > 0xdfff) throw new Fail('lone_surrogate', i, 'lone surrogate escape');
          return [String.fromCharCode(u, lo), i + 12];
        }
        return [String.fromCharCode(u), i + 6];
      }
      default:
        throw new Fail(i + 1 >= s.length ? 'unterminated_string' : 'bad_escape', i, 'invalid escape sequence');
    }
  }

  private hex4(i: number): number {
    const h = this.s.slice(i + 2, i + 6);
    if (!/^[0-9a-fA-F]{4}$/.test(h)) throw new Fail('bad_escape', i, 'invalid \\u escape');
    return parseInt(h, 16);
  }
}

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
