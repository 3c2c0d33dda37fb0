// Regular expressions written by a user (sandbox blocked_patterns and blocked_commands, JSON Schema `pattern`
// and `patternProperties` of a tool's input_schema) run here, never in the host's backtracking engine: there
// `.*password.*=.*` (the spec §5.8 example) against a 30 KB command line takes minutes and stalls the event
// loop. This is a Thompson NFA simulation (the RE2 approach): every input character advances a set of at most
// `program length` states, so a test costs O(pattern × input) whatever the pattern.
//
// The syntax is the regular subset of ECMAScript regular expressions: literals and escapes (\d \w \s \b and
// their negations, \t \n \r \f \v \0 \xHH \uHHHH \u{H…}, escaped punctuation), `.`, classes with ranges and
// negation, ^ $, groups ( ) (?: ) (?<name> ), alternation, and the quantifiers * + ? {n} {n,} {n,m} (greedy or
// lazy: only whether there is a match is asked). Flags i, m, s, u (u: the input is read by code point).
// What needs backtracking — backreferences (\1, \k<name>) and lookaround ((?= (?! (?<= (?<!) — is refused with
// a LinearRegexError, as is a pattern whose program would be larger than MAX_PROGRAM (counted repetitions are
// expanded). Callers check patterns when a manifest is loaded (linearRegexProblem), so a refused pattern is
// a load error naming the field, not a surprise at the first call.
//
// re2js (a maintained RE2 port) was measured for this: ~50 KB of the 400 KB bundle budget even in the
// compressed cold part, which no longer fits (docs/size-budget.md); the subset here is what the callers need.
import { ClawError } from '../protocol/errors.ts';
import { parseLinear, type Node } from './linear-regex-parse.ts';

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
  | { op: 'char'; test: (c: number) => boolean; next: number }
  | { op: 'split'; a: number; b: number }
  | { op: 'jmp'; next: number }
  | { op: 'assert'; kind: 'bol' | 'eol' | 'wordb' | 'nwordb'; next: number }
  | { op: 'match' };

const cache = new Map<string, LinearRegex>();

/** Compiled once per (source, flags); throws LinearRegexError for a pattern this engine refuses. */
export function compileLinear(source: string, flags = ''): LinearRegex {
  const key = `${flags}/${source}`;
  let re = cache.get(key);
  if (!re) {
    re = build(source, flags);
    cache.set(key, re);
  }
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
    new RegExp(source, flags);
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
  return { source, flags, test: (text) => run(prog, text, opts) };
}

// Each fragment is compiled in place; `patch` fills the forward references to the instruction after it.
function compile(n: Node, emit: (i: Inst) => number, prog: Inst[]): void {
  const here = () => prog.length;
  switch (n.type) {
    case 'empty':
      return;
    case 'char':
      emit({ op: 'char', test: n.test, next: here() + 1 });
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
const isLineTerminator = (c: number): boolean => c === 10 || c === 13 || c === 0x2028 || c === 0x2029;

/** Pike-style simulation without captures: two state lists, each state entered at most once per position. */
function run(prog: Inst[], text: string, opts: { multiline: boolean; unicode: boolean }): boolean {
  const n = prog.length;
  let cur = new Int32Array(n);
  let next = new Int32Array(n);
  let curLen = 0;
  let nextLen = 0;
  // `seen[pc] === gen` marks pc as already on the list being built (generation counter instead of clearing).
  const seen = new Uint32Array(n);
  let gen = 0;
  // Every state is expanded at most once per list and pushes at most two: 2n + 1 entries suffice.
  const stack = new Int32Array(2 * n + 1);

  let prevChar = -1;
  let pos = 0;
  const charAt = (i: number): number => {
    if (i >= text.length) return -1;
    return opts.unicode ? (text.codePointAt(i) as number) : text.charCodeAt(i);
  };
  const width = (c: number): number => (c > 0xffff ? 2 : 1);

  // Adds pc and everything reachable through split/jmp/assert at the current position to `list`.
  const add = (list: Int32Array, len: number, pc0: number, prev: number, here: number): number | true => {
    let sp = 0;
    stack[sp++] = pc0;
    while (sp > 0) {
      const pc = stack[--sp];
      if (seen[pc] === gen) continue;
      seen[pc] = gen;
      const inst = prog[pc];
      switch (inst.op) {
        case 'match':
          return true;
        case 'jmp':
          stack[sp++] = inst.next;
          break;
        case 'split':
          // b first so a is explored first (order does not change the answer, only the work).
          stack[sp++] = inst.b;
          stack[sp++] = inst.a;
          break;
        case 'assert': {
          let ok: boolean;
          if (inst.kind === 'bol') ok = prev === -1 || (opts.multiline && isLineTerminator(prev));
          else if (inst.kind === 'eol') ok = here === -1 || (opts.multiline && isLineTerminator(here));
          else {
            const b = (prev !== -1 && isWordChar(prev)) !== (here !== -1 && isWordChar(here));
            ok = inst.kind === 'wordb' ? b : !b;
          }
          if (ok) stack[sp++] = inst.next;
          break;
        }
        case 'char':
          list[len++] = pc;
          break;
      }
    }
    return len;
  };

  for (;;) {
    const c = charAt(pos);
    // A new thread starts at every position: the search is unanchored, like RegExp.prototype.test.
    // `cur` holds only character states (closures were taken when they were added): mark them, then add the
    // closure of a thread starting here.
    gen++;
    for (let i = 0; i < curLen; i++) seen[cur[i]] = gen;
    const added = add(cur, curLen, 0, prevChar, c);
    if (added === true) return true;
    curLen = added;
    if (c === -1) return false;
    gen++;
    nextLen = 0;
    for (let i = 0; i < curLen; i++) {
      const inst = prog[cur[i]] as Extract<Inst, { op: 'char' }>;
      if (inst.test(c)) {
        const a = add(next, nextLen, inst.next, c, charAt(pos + width(c)));
        if (a === true) return true;
        nextLen = a;
      }
    }
    prevChar = c;
    pos += width(c);
    [cur, next] = [next, cur];
    curLen = nextLen;
  }
}
