// Regular expressions written by a user (sandbox blocked_patterns and blocked_commands, JSON Schema `pattern`
// and `patternProperties` of a tool's input_schema, the `match` of an offline rules file) run here, never in the host's backtracking engine: there
// `.*password.*=.*` (the spec §5.8 example) against a 30 KB command line takes minutes and stalls the event
// loop. This is a Thompson NFA, simulated as a lazily built DFA (the RE2 approach, see run()): every input
// character advances a set of at most `program length` states, so a test costs O(pattern × input) at worst.
//
// The syntax is the regular subset of ECMAScript regular expressions: literals and escapes (\d \w \s \b and
// their negations, \t \n \r \f \v \0 \xHH \uHHHH \u{H…}, \p{…} under u, escaped punctuation), `.`, classes
// with ranges and negation, ^ $, groups ( ) (?: ) (?<name> ), alternation, and the quantifiers * + ? {n} {n,} {n,m} (greedy or
// lazy: only whether there is a match is asked). Flags i, m, s, u (u: the input is read by code point).
// What needs backtracking — backreferences (\1, \k<name>) and lookaround ((?= (?! (?<= (?<!) — is refused with
// a LinearRegexError, as is a pattern whose program would be larger than MAX_PROGRAM (counted repetitions are
// expanded). Callers check patterns when a manifest is loaded (linearRegexProblem), so a refused pattern is
// a load error naming the field, not a surprise at the first call.
//
// re2js (a maintained RE2 port) was measured for this: +53 KB of the 400 KB bundle budget even in the
// compressed cold part (407 KB in all), which does not fit; this engine adds ~10 KB.
import { ClawError } from '../protocol/errors.ts';
import { parseLinear, type Node } from './linear-regex-parse.ts';

// The host constructor as it was when this module loaded: json-schema.ts stands the linear engine in for the
// global RegExp while its validator runs, and the syntax check below must not call back into itself.
const HostRegExp = RegExp;

/** Largest compiled program (states); bounds both the compile and the per-character cost. */
export const MAX_PROGRAM = 5000;

export class LinearRegexError extends ClawError {
  constructor(message: string) {
    super('linear_regex', message);
    this.name = 'LinearRegexError';
  }
}

export interface LinearRegex {
  readonly source: string;
  readonly flags: string;
  /** True when the pattern matches anywhere in `text` (RegExp.prototype.test without `g` state). */
  test(text: string): boolean;
}

// Instructions. CHAR tests one character; SPLIT forks; ASSERT checks a zero-width condition.
type Inst =
  | { op: 'char'; test: (c: number) => boolean; literal?: number; next: number }
  | { op: 'split'; a: number; b: number }
  | { op: 'jmp'; next: number }
  | { op: 'assert'; kind: 'bol' | 'eol' | 'wordb' | 'nwordb'; next: number }
  | { op: 'match' };

// Patterns come from manifests (a few dozen), but also from arguments: a schema's `format: "regex"` makes
// the validator compile each argument string. So the cache is bounded: past MAX_CACHED the least recently
// used pattern goes (a Map iterates in insertion order; a hit is moved to the end).
const MAX_CACHED = 512;
const cache = new Map<string, LinearRegex>();

/** Compiled once per (source, flags) while cached; throws LinearRegexError for a pattern this engine refuses. */
export function compileLinear(source: string, flags = ''): LinearRegex {
  const key = `${flags}/${source}`;
  let re = cache.get(key);
  if (re) cache.delete(key);
  else re = build(source, flags);
  cache.set(key, re);
  if (cache.size > MAX_CACHED) cache.delete(cache.keys().next().value as string);
  return re;
}

/** Why `source` cannot run here (a message naming the problem), or undefined when it can. */
export function linearRegexProblem(source: string, flags = ''): string | undefined {
  try {
    compileLinear(source, flags);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

function build(source: string, flags: string): LinearRegex {
  for (const f of flags) if (!'imsu'.includes(f)) throw new LinearRegexError(`unsupported flag "${f}" in /${source}/`);
  const opts = { icase: flags.includes('i'), multiline: flags.includes('m'), dotAll: flags.includes('s'), unicode: flags.includes('u') };
  let ast: Node;
  try {
    // The host checks the syntax (and words the error); compiling is linear, only matching backtracks.
    new HostRegExp(source, flags);
    ast = parseLinear(source, opts);
  } catch (e) {
    throw new LinearRegexError(`/${source}/: ${(e as Error).message}`);
  }
  const prog: Inst[] = [];
  const emit = (i: Inst): number => {
    if (prog.length >= MAX_PROGRAM) throw new LinearRegexError(`/${source}/ is too large (over ${MAX_PROGRAM} states once repetitions are expanded)`);
    prog.push(i);
    return prog.length - 1;
  };
  compile(ast, emit, prog);
  emit({ op: 'match' });
  const flat = flatten(prog, opts.icase && opts.unicode ? isWordCharIu : isWordChar);
  const dfa = { d: newDfa() };
  return { source, flags, test: (text) => run(flat, dfa, text, opts.multiline, opts.unicode) };
}

// Each fragment is emitted in place; forward references (split's second branch, jmp) are patched once known.
function compile(n: Node, emit: (i: Inst) => number, prog: Inst[]): void {
  const here = () => prog.length;
  switch (n.type) {
    case 'empty':
      return;
    case 'char':
      emit({ op: 'char', test: n.test, literal: n.literal, next: here() + 1 });
      return;
    case 'assert':
      emit({ op: 'assert', kind: n.kind, next: here() + 1 });
      return;
    case 'seq':
      for (const x of n.items) compile(x, emit, prog);
      return;
    case 'alt': {
      // split L1, next; L1: a; jmp end; next: split L2 … ; last alternative falls through.
      const jumps: number[] = [];
      for (let i = 0; i < n.items.length; i++) {
        if (i < n.items.length - 1) {
          const s = emit({ op: 'split', a: here() + 1, b: -1 });
          compile(n.items[i], emit, prog);
          jumps.push(emit({ op: 'jmp', next: -1 }));
          (prog[s] as { b: number }).b = here();
        } else compile(n.items[i], emit, prog);
      }
      for (const j of jumps) (prog[j] as { next: number }).next = here();
      return;
    }
    case 'repeat': {
      const { min, max, item } = n;
      for (let i = 0; i < min; i++) compile(item, emit, prog);
      if (max === Infinity) {
        // L: split body, end; body; jmp L
        const s = emit({ op: 'split', a: here() + 1, b: -1 });
        compile(item, emit, prog);
        emit({ op: 'jmp', next: s });
        (prog[s] as { b: number }).b = here();
      } else {
        const splits: number[] = [];
        for (let i = min; i < max; i++) {
          splits.push(emit({ op: 'split', a: here() + 1, b: -1 }));
          compile(item, emit, prog);
        }
        for (const s of splits) (prog[s] as { b: number }).b = here();
      }
      return;
    }
  }
}

const isWordChar = (c: number): boolean => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
// Under `iu`, \b and \B also count the characters whose simple case folding is a word character (spec
// §22.2.2.9.3 WordCharacters): ſ (U+017F → s) and the Kelvin sign (U+212A → k), no others.
const isWordCharIu = (c: number): boolean => isWordChar(c) || c === 0x17f || c === 0x212a;
const isLineTerminator = (c: number): boolean => c === 10 || c === 13 || c === 0x2028 || c === 0x2029;

const OP_CHAR = 0;
const OP_SPLIT = 1;
const OP_JMP = 2;
const OP_MATCH = 3;
const OP_BOL = 4;
const OP_EOL = 5;
const OP_WORDB = 6;
const OP_NWORDB = 7;
const ASSERT_OPS = { bol: OP_BOL, eol: OP_EOL, wordb: OP_WORDB, nwordb: OP_NWORDB } as const;

/** The program as flat arrays: one monomorphic loop reads them (objects of five shapes made it 10× slower). */
interface Flat {
  op: Uint8Array;
  x: Int32Array; // char/jmp/assert: next; split: first branch
  y: Int32Array; // split: second branch
  test: ((c: number) => boolean)[];
  /** char: the one code point it accepts, or -1 (then `test` decides): saves a call per state and character. */
  lit: Int32Array;
  /** The context bits (CTX_*) some assertion of the program reads: 0 for most patterns, so no context is computed. */
  ctxMask: number;
  /** When every match starts with this one character (the start closure is one literal state): its text. */
  first?: string;
  /** What \b calls a word character (depends on the flags). */
  word: (c: number) => boolean;
}

function flatten(prog: Inst[], word: (c: number) => boolean): Flat {
  const n = prog.length;
  const f: Flat = { op: new Uint8Array(n), x: new Int32Array(n), y: new Int32Array(n), test: new Array(n).fill(null), lit: new Int32Array(n).fill(-1), ctxMask: 0, word };
  prog.forEach((inst, pc) => {
    if (inst.op === 'char') [f.op[pc], f.x[pc], f.test[pc], f.lit[pc]] = [OP_CHAR, inst.next, inst.test, inst.literal ?? -1];
    else if (inst.op === 'split') [f.op[pc], f.x[pc], f.y[pc]] = [OP_SPLIT, inst.a, inst.b];
    else if (inst.op === 'jmp') [f.op[pc], f.x[pc]] = [OP_JMP, inst.next];
    else if (inst.op === 'assert') {
      [f.op[pc], f.x[pc]] = [ASSERT_OPS[inst.kind], inst.next];
      f.ctxMask |= inst.kind === 'bol' ? CTX_BOL : inst.kind === 'eol' ? CTX_EOL : CTX_PREV_WORD | CTX_HERE_WORD;
    }
    else f.op[pc] = OP_MATCH;
  });
  let pc = 0;
  while (f.op[pc] === OP_JMP) pc = f.x[pc];
  const head = prog[pc];
  if (head.op === 'char' && head.literal !== undefined) f.first = String.fromCodePoint(head.literal);
  return f;
}

// The simulation is run as a lazily built DFA (RE2's approach): a state is the set of NFA states alive at a
// position, its transitions are computed the first time a character needs them and kept, so a character costs
// two array reads once the states it meets are known, and at most O(program length) the first time. Zero-width
// assertions depend only on the characters either side, so the closure of a set is kept per context (4 bits).
// The cache is bounded (MAX_CACHE_WORDS) and dropped when full: memory stays bounded, time stays linear.

const MAX_CACHE_WORDS = 1 << 20;

const CTX_BOL = 1; // ^ holds here
const CTX_EOL = 2; // $ holds here
const CTX_PREV_WORD = 4;
const CTX_HERE_WORD = 8;

/** The NFA states entered by a step (before their closure), plus the start state: the search is unanchored. */
interface Entered {
  pcs: number[];
  closed: (Closed | undefined)[];
}
/** A closure: the character states alive at a position, and whether the match state was reached. */
interface Closed {
  chars: number[];
  match: boolean;
  ascii: (Entered | undefined)[];
  other: Map<number, Entered>;
}

interface Dfa {
  entered: Map<string, Entered>;
  closed: Map<string, Closed>;
  words: number;
}

const newDfa = (): Dfa => ({ entered: new Map(), closed: new Map(), words: 0 });

function intern(d: Dfa, pcs: number[]): Entered {
  pcs.sort((a, b) => a - b);
  const key = pcs.join(',');
  let e = d.entered.get(key);
  if (!e) {
    e = { pcs, closed: new Array(16) };
    d.entered.set(key, e);
    d.words += pcs.length + 16;
  }
  return e;
}

function close(p: Flat, d: Dfa, e: Entered, ctx: number): Closed {
  const { op, x, y } = p;
  const seen = new Uint8Array(op.length);
  const stack = [...e.pcs];
  const chars: number[] = [];
  let match = false;
  while (stack.length > 0) {
    const pc = stack.pop()!;
    if (seen[pc]) continue;
    seen[pc] = 1;
    switch (op[pc]) {
      case OP_CHAR:
        chars.push(pc);
        break;
      case OP_SPLIT:
        stack.push(y[pc], x[pc]);
        break;
      case OP_JMP:
        stack.push(x[pc]);
        break;
      case OP_MATCH:
        match = true;
        break;
      case OP_BOL:
        if (ctx & CTX_BOL) stack.push(x[pc]);
        break;
      case OP_EOL:
        if (ctx & CTX_EOL) stack.push(x[pc]);
        break;
      default: {
        const boundary = !(ctx & CTX_PREV_WORD) !== !(ctx & CTX_HERE_WORD);
        if (boundary === (op[pc] === OP_WORDB)) stack.push(x[pc]);
      }
    }
  }
  chars.sort((a, b) => a - b);
  const key = `${match ? 'm' : ''}${chars.join(',')}`;
  let c = d.closed.get(key);
  if (!c) {
    c = { chars, match, ascii: new Array(128), other: new Map() };
    d.closed.set(key, c);
    d.words += chars.length + 128;
  }
  return c;
}

function step(p: Flat, d: Dfa, from: Closed, ch: number): Entered {
  const pcs = [0];
  for (const pc of from.chars) {
    const l = p.lit[pc];
    if (l >= 0 ? l === ch : p.test[pc](ch)) pcs.push(p.x[pc]);
  }
  return intern(d, [...new Set(pcs)]);
}

function context(prev: number, here: number, multiline: boolean, isWord: (c: number) => boolean): number {
  let ctx = 0;
  if (prev === -1 || (multiline && isLineTerminator(prev))) ctx |= CTX_BOL;
  if (here === -1 || (multiline && isLineTerminator(here))) ctx |= CTX_EOL;
  if (prev !== -1 && isWord(prev)) ctx |= CTX_PREV_WORD;
  if (here !== -1 && isWord(here)) ctx |= CTX_HERE_WORD;
  return ctx;
}

function run(p: Flat, dfa: { d: Dfa }, text: string, multiline: boolean, unicode: boolean): boolean {
  const len = text.length;
  let d = dfa.d;
  const start = () => intern(d, [0]);
  let e = start();
  const first = e.pcs.length === 1 ? p.first : undefined;
  let prev = -1;
  let pos = 0;
  let misses = 0;
  for (;;) {
    if (first !== undefined && e.pcs.length === 1) {
      // Only the start state is alive and every match begins with this literal: jump to its next occurrence.
      // The start state is a plain character test, so the character before the jump point is never looked at.
      const at = text.indexOf(first, pos);
      if (at < 0) return false;
      pos = at;
    }
    const c = pos >= len ? -1 : unicode ? (text.codePointAt(pos) as number) : text.charCodeAt(pos);
    const ctx = p.ctxMask === 0 ? 0 : context(prev, c, multiline, p.word) & p.ctxMask;
    const closed = e.closed[ctx] ?? (e.closed[ctx] = close(p, d, e, ctx));
    if (closed.match) return true;
    if (c === -1) return false;
    let next = c < 128 ? closed.ascii[c] : closed.other.get(c);
    if (!next) {
      if (d.words > MAX_CACHE_WORDS) {
        // Full: start a new cache, carrying over only the current position's state.
        dfa.d = d = newDfa();
        e = intern(d, [...e.pcs]);
        continue;
      }
      // Mostly new states: this text defeats the cache; the plain simulation is cheaper (at most one re-read).
      if (++misses > 256 && misses * 4 > pos) return runNfa(p, text, multiline, unicode);
      next = step(p, d, closed, c);
      if (c < 128) closed.ascii[c] = next;
      else closed.other.set(c, next);
    }
    e = next;
    prev = c;
    pos += c > 0xffff ? 2 : 1;
  }
}

/**
 * The same search without the cache: two lists of character states; each state is entered at most once per
 * position (a generation mark instead of clearing), so a position costs O(live states). Used when the live
 * sets keep changing (`a[ab]{300}c`): there interning a new DFA state per character costs ~10× more.
 */
function runNfa(p: Flat, text: string, multiline: boolean, unicode: boolean): boolean {
  const { op, x, y, test, lit } = p;
  const n = op.length;
  let cur = new Int32Array(n);
  let next = new Int32Array(n);
  let curLen = 0;
  const seen = new Uint32Array(n);
  let gen = 0;
  // Every state is expanded at most once per list and pushes at most two: 2n + 1 entries suffice.
  const stack = new Int32Array(2 * n + 1);
  const len = text.length;

  // Adds the closure of pc0 (through split, jmp and assertions between `prev` and `here`) to `list`;
  // returns the new length, or -1 when the match state is reached.
  const add = (list: Int32Array, count: number, pc0: number, prev: number, here: number): number => {
    let sp = 0;
    stack[sp++] = pc0;
    while (sp > 0) {
      const pc = stack[--sp];
      if (seen[pc] === gen) continue;
      seen[pc] = gen;
      switch (op[pc]) {
        case OP_CHAR:
          list[count++] = pc;
          break;
        case OP_SPLIT:
          stack[sp++] = y[pc];
          stack[sp++] = x[pc];
          break;
        case OP_JMP:
          stack[sp++] = x[pc];
          break;
        case OP_MATCH:
          return -1;
        case OP_BOL:
          if (prev === -1 || (multiline && isLineTerminator(prev))) stack[sp++] = x[pc];
          break;
        case OP_EOL:
          if (here === -1 || (multiline && isLineTerminator(here))) stack[sp++] = x[pc];
          break;
        default: {
          const boundary = (prev !== -1 && p.word(prev)) !== (here !== -1 && p.word(here));
          if (boundary === (op[pc] === OP_WORDB)) stack[sp++] = x[pc];
        }
      }
    }
    return count;
  };

  let prev = -1;
  let pos = 0;
  for (;;) {
    if (curLen === 0 && p.first !== undefined) {
      // No thread alive, and a match can only start at this literal: jump to its next occurrence. The start
      // state is a plain character test, so the character before the jump point is never looked at.
      const at = text.indexOf(p.first, pos);
      if (at < 0) return false;
      pos = at;
    }
    const c = pos >= len ? -1 : unicode ? (text.codePointAt(pos) as number) : text.charCodeAt(pos);
    const w = c > 0xffff ? 2 : 1;
    // A thread starts at every position (the search is unanchored, like RegExp.prototype.test). The carried
    // states are character states whose closures were taken when they were added: mark them, add the new one.
    gen++;
    for (let i = 0; i < curLen; i++) seen[cur[i]] = gen;
    curLen = add(cur, curLen, 0, prev, c);
    if (curLen < 0) return true;
    if (c === -1) return false;
    const after = pos + w >= len ? -1 : unicode ? (text.codePointAt(pos + w) as number) : text.charCodeAt(pos + w);
    gen++;
    let nextLen = 0;
    for (let i = 0; i < curLen; i++) {
      const pc = cur[i];
      const l = lit[pc];
      if (l >= 0 ? l === c : test[pc](c)) {
        nextLen = add(next, nextLen, x[pc], c, after);
        if (nextLen < 0) return true;
      }
    }
    prev = c;
    pos += w;
    const t = cur;
    cur = next;
    next = t;
    curLen = nextLen;
  }
}
