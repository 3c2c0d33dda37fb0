// The parser of linear-regex.ts: ECMAScript pattern text → a tree of regular operations. The pattern has
// already been compiled by the host's RegExp (syntax errors are reported with the host's own message), so
// this parser only needs to read valid patterns and refuse the constructs that are not regular.

export type AssertKind = 'bol' | 'eol' | 'wordb' | 'nwordb';
export type Node =
  | { type: 'empty' }
  | { type: 'char'; test: (c: number) => boolean; literal?: number }
  | { type: 'assert'; kind: AssertKind }
  | { type: 'seq'; items: Node[] }
  | { type: 'alt'; items: Node[] }
  | { type: 'repeat'; min: number; max: number; item: Node };

export interface ParseOptions {
  icase: boolean;
  dotAll: boolean;
  unicode: boolean;
}

/** Counted repetitions above this are refused before they are expanded. */
const MAX_COUNT = 1000;

type Ranges = number[]; // [lo0, hi0, lo1, hi1, …]
/** One escape or class member: ranges, or a predicate (Unicode properties), possibly negated. */
interface CharSet {
  ranges: Ranges;
  negate: boolean;
  test?: (c: number) => boolean;
}

// Captured at load: json-schema.ts stands the linear engine in for the global RegExp while its validator runs.
const HostRegExp = RegExp;

/**
 * \p{…} / \P{…}: the host decides membership of one character (`^\p{L}$` on a single code point cannot
 * backtrack), so the Unicode tables stay the host's.
 */
function propertyTest(body: string): (c: number) => boolean {
  const re = new HostRegExp(`^\\p{${body}}$`, 'u');
  return (c) => re.test(String.fromCodePoint(c));
}

const DIGIT: Ranges = [48, 57];
const WORD: Ranges = [48, 57, 65, 90, 95, 95, 97, 122];
// ECMAScript WhiteSpace and LineTerminator (the \s class).
const SPACE: Ranges = [9, 13, 32, 32, 0xa0, 0xa0, 0x1680, 0x1680, 0x2000, 0x200a, 0x2028, 0x2029, 0x202f, 0x202f, 0x205f, 0x205f, 0x3000, 0x3000, 0xfeff, 0xfeff];
const LINE_TERMINATORS: Ranges = [10, 10, 13, 13, 0x2028, 0x2029];

const inRanges = (r: Ranges, c: number): boolean => {
  for (let i = 0; i < r.length; i += 2) if (c >= r[i] && c <= r[i + 1]) return true;
  return false;
};

class Parser {
  i = 0;
  constructor(
    readonly src: string,
    readonly o: ParseOptions,
  ) {}

  fail(msg: string): never {
    throw new Error(msg);
  }
  peek(): string {
    return this.src[this.i] ?? '';
  }
  eof(): boolean {
    return this.i >= this.src.length;
  }

  alt(): Node {
    const items = [this.seq()];
    while (this.peek() === '|') {
      this.i++;
      items.push(this.seq());
    }
    return items.length === 1 ? items[0] : { type: 'alt', items };
  }

  seq(): Node {
    const items: Node[] = [];
    while (!this.eof() && this.peek() !== '|' && this.peek() !== ')') {
      const start = this.i;
      const atom = this.atom();
      items.push(this.quantified(this.o.icase && atom.type === 'char' ? this.hostCase(this.src.slice(start, this.i)) : atom));
    }
    return items.length === 1 ? items[0] : items.length === 0 ? { type: 'empty' } : { type: 'seq', items };
  }

  quantified(atom: Node): Node {
    for (;;) {
      const c = this.peek();
      let min: number;
      let max: number;
      if (c === '*') [min, max] = [0, Infinity];
      else if (c === '+') [min, max] = [1, Infinity];
      else if (c === '?') [min, max] = [0, 1];
      else if (c === '{') {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.i, this.i + 32));
        if (!m) return atom; // a literal `{` (Annex B), read by atom() next time round
        min = Number(m[1]);
        max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
        if (min > MAX_COUNT || (max !== Infinity && max > MAX_COUNT)) this.fail(`repetition count over ${MAX_COUNT}`);
        this.i += m[0].length - 1;
      } else return atom;
      this.i++;
      if (this.peek() === '?') this.i++; // lazy: same language
      // A repeated assertion holds once or is skipped: `(^)*` is nothing, `(^)+` is `^`.
      if (atom.type === 'assert') {
        if (min === 0) atom = { type: 'empty' };
        continue;
      }
      atom = { type: 'repeat', min, max, item: atom };
    }
  }

  /**
   * Under `i` one character atom (literal, escape, class, `.`) matches `c` when some member has the same
   * Canonicalize (spec §22.2.2.7.3) as `c`: toUpperCase without `u` (ſ and the Kelvin sign are not s and k),
   * simple case folding with `u` (they are). That relation is the host's: it decides on the atom's own text,
   * anchored, against one character, which cannot backtrack.
   */
  hostCase(atomSource: string): Node {
    const re = new HostRegExp(`^(?:${atomSource})$`, `i${this.o.unicode ? 'u' : ''}${this.o.dotAll ? 's' : ''}`);
    // ASCII answers are kept (most input is ASCII; a host call costs ~10× a table read): 0 unknown, 1 no, 2 yes.
    const ascii = new Uint8Array(128);
    return {
      type: 'char',
      test: (c) => {
        if (c >= 128) return re.test(String.fromCodePoint(c));
        return (ascii[c] ||= re.test(String.fromCharCode(c)) ? 2 : 1) === 2;
      },
    };
  }

  /** Without `i`; under `i` seq() hands the atom to hostCase (case folding applies before a negation). */
  char(test: (c: number) => boolean, negate = false): Node {
    return { type: 'char', test: negate ? (x) => !test(x) : test };
  }

  atom(): Node {
    const c = this.src[this.i++];
    switch (c) {
      case '^':
        return { type: 'assert', kind: 'bol' };
      case '$':
        return { type: 'assert', kind: 'eol' };
      case '.':
        return this.o.dotAll ? { type: 'char', test: () => true } : { type: 'char', test: (x) => !inRanges(LINE_TERMINATORS, x) };
      case '(':
        return this.group();
      case '[':
        return this.cls();
      case '\\':
        return this.escapeAtom();
      default: {
        this.i--;
        const cp = this.literalCodePoint();
        if (this.o.icase) return this.char((x) => x === cp);
        return { type: 'char', test: (x) => x === cp, literal: cp };
      }
    }
  }

  literalCodePoint(): number {
    const cp = this.o.unicode ? this.src.codePointAt(this.i)! : this.src.charCodeAt(this.i);
    this.i += cp > 0xffff ? 2 : 1;
    return cp;
  }

  group(): Node {
    if (this.peek() === '?') {
      const two = this.src.slice(this.i, this.i + 3);
      if (two.startsWith('?:')) this.i += 2;
      else if (two === '?<=' || two === '?<!' || two.startsWith('?=') || two.startsWith('?!')) this.fail('lookaround ((?=, (?!, (?<=, (?<!) needs a backtracking engine');
      else if (two.startsWith('?<')) {
        const end = this.src.indexOf('>', this.i);
        this.i = end + 1;
      } else this.fail(`unsupported group "(${two}"`);
    }
    const inner = this.alt();
    if (this.peek() !== ')') this.fail('unbalanced parenthesis');
    this.i++;
    return inner;
  }

  /** One escape inside or outside a class: a set of ranges, or undefined for \b/\B handled by the caller. */
  escapeRanges(inClass: boolean): CharSet {
    const c = this.src[this.i++];
    const set = (ranges: Ranges, negate = false) => ({ ranges, negate });
    const one = (cp: number) => set([cp, cp]);
    switch (c) {
      case 'd':
        return set(DIGIT);
      case 'D':
        return set(DIGIT, true);
      case 'w':
        return set(WORD);
      case 'W':
        return set(WORD, true);
      case 's':
        return set(SPACE);
      case 'S':
        return set(SPACE, true);
      case 't':
        return one(9);
      case 'n':
        return one(10);
      case 'v':
        return one(11);
      case 'f':
        return one(12);
      case 'r':
        return one(13);
      case 'b':
        if (inClass) return one(8);
        break;
      case '0':
        if (!/[0-9]/.test(this.peek())) return one(0);
        break;
      case 'x': {
        const h = /^[0-9a-fA-F]{2}/.exec(this.src.slice(this.i, this.i + 2));
        if (h) {
          this.i += 2;
          return one(parseInt(h[0], 16));
        }
        return one(120);
      }
      case 'u': {
        const braced = this.o.unicode ? /^\{([0-9a-fA-F]+)\}/.exec(this.src.slice(this.i, this.i + 10)) : null;
        if (braced) {
          this.i += braced[0].length;
          return one(parseInt(braced[1], 16));
        }
        const h = /^[0-9a-fA-F]{4}/.exec(this.src.slice(this.i, this.i + 4));
        if (h) {
          this.i += 4;
          let cp = parseInt(h[0], 16);
          // \uD83D\uDE00 under u is one code point.
          const lo = this.o.unicode && cp >= 0xd800 && cp <= 0xdbff ? /^\\u(d[c-f][0-9a-f]{2})/i.exec(this.src.slice(this.i, this.i + 6)) : null;
          if (lo) {
            this.i += 6;
            cp = 0x10000 + ((cp - 0xd800) << 10) + (parseInt(lo[1], 16) - 0xdc00);
          }
          return one(cp);
        }
        return one(117);
      }
      case 'c': {
        const l = this.peek();
        if (/[a-zA-Z]/.test(l)) {
          this.i++;
          return one(l.charCodeAt(0) % 32);
        }
        this.i--;
        return one(92); // Annex B: a lone backslash
      }
      case 'p':
      case 'P': {
        const end = this.src.indexOf('}', this.i);
        if (!this.o.unicode || this.peek() !== '{' || end < 0) break;
        const body = this.src.slice(this.i + 1, end);
        this.i = end + 1;
        return { ranges: [], negate: c === 'P', test: propertyTest(body) };
      }
      case 'k':
        if (this.o.unicode || /\(\?<[^=!]/.test(this.src)) this.fail('backreferences (\\k<name>) need a backtracking engine');
        break;
    }
    if (c !== undefined && /[1-9]/.test(c)) {
      if (inClass && !this.o.unicode) return one(c.charCodeAt(0) - 48); // Annex B octal in a class
      this.fail(`backreferences (\\${c}) need a backtracking engine`);
    }
    // An identity escape: the character itself.
    this.i--;
    return one(this.literalCodePoint());
  }

  escapeAtom(): Node {
    const c = this.peek();
    if (c === 'b' || c === 'B') {
      this.i++;
      return { type: 'assert', kind: c === 'b' ? 'wordb' : 'nwordb' };
    }
    const { ranges, negate, test } = this.escapeRanges(false);
    return this.char(test ?? ((x) => inRanges(ranges, x)), negate);
  }

  cls(): Node {
    let negate = false;
    if (this.peek() === '^') {
      negate = true;
      this.i++;
    }
    const ranges: Ranges = [];
    const others: ((c: number) => boolean)[] = [];
    const item = (): CharSet => {
      if (this.peek() === '\\') {
        this.i++;
        return this.escapeRanges(true);
      }
      const cp = this.literalCodePoint();
      return { ranges: [cp, cp], negate: false };
    };
    while (!this.eof() && this.peek() !== ']') {
      const a = item();
      const single = !a.negate && !a.test && a.ranges.length === 2 && a.ranges[0] === a.ranges[1];
      if (single && this.peek() === '-' && this.src[this.i + 1] !== ']' && this.i + 1 < this.src.length) {
        const save = this.i;
        this.i++;
        const b = item();
        if (!b.negate && !b.test && b.ranges.length === 2 && b.ranges[0] === b.ranges[1]) {
          ranges.push(a.ranges[0], b.ranges[0]);
          continue;
        }
        this.i = save; // `[\w-x]` (Annex B): the dash is literal
      }
      if (a.test || a.negate) {
        const t = a.test ?? ((x: number) => inRanges(a.ranges, x));
        others.push(a.negate ? (x) => !t(x) : t);
      } else ranges.push(...a.ranges);
    }
    if (this.peek() !== ']') this.fail('unterminated character class');
    this.i++;
    const inClass = (x: number) => inRanges(ranges, x) || others.some((t) => t(x));
    return this.char(inClass, negate);
  }
}

export function parseLinear(source: string, o: ParseOptions): Node {
  const p = new Parser(source, o);
  const node = p.alt();
  if (!p.eof()) p.fail('unbalanced parenthesis');
  return trimOptionalEnds(node);
}

/**
 * Only whether a match exists is asked, anywhere in the text: a leading or trailing `X*` / `X?` (a repetition
 * that may match nothing) changes no answer, so `.*password.*=.*` runs as `password.*=`. Fewer live states,
 * and a literal first character lets the search skip ahead (linear-regex.ts).
 */
function trimOptionalEnds(n: Node): Node {
  if (n.type === 'repeat' && n.min === 0) return { type: 'empty' };
  if (n.type !== 'seq') return n;
  let a = 0;
  let b = n.items.length;
  const optional = (x: Node) => x.type === 'repeat' && x.min === 0;
  while (a < b && optional(n.items[a])) a++;
  while (b > a && optional(n.items[b - 1])) b--;
  const items = n.items.slice(a, b);
  return items.length === 0 ? { type: 'empty' } : items.length === 1 ? items[0] : { type: 'seq', items };
}
