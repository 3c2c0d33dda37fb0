// A parse-only YAML 1.2 reader for manifests: one document of block and flow collections and
// scalars (YAML 1.2.2 §6–§9), straight from the text to nodes with positions, no token stream.
// Supported: block maps/sequences (compact `- a: 1`, `- ` at the parent key's indent), flow
// collections over several lines, plain / single / double quoted scalars with line folding and
// every escape, block scalars `|` `>` with chomping and indentation indicators, comments,
// anchors/aliases, core tags, `---` / `...`, `%YAML 1.2`.
// Refused with an "unsupported" error: explicit `?` keys, non-scalar and alias keys, local or
// unknown tags, `%TAG` and other directives, a `%YAML` other than 1.2, an alias to a node that is
// still open (recursive). Several documents are an error (a manifest is one document).
// Char codes instead of regular expressions: compiling a regex costs more than reading a manifest.
import { YamlError } from './errors.ts';
import type { YAlias, YMap, YNode, YScalar, YSeq } from './nodes.ts';
import { ESCAPES, isHex, resolvePlain, resolveTagged } from './scalars.ts';

const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const SP = 0x20;
const HASH = 0x23;
const COLON = 0x3a;
const DASH = 0x2d;
const COMMA = 0x2c;
const LBRACK = 0x5b;
const RBRACK = 0x5d;
const LBRACE = 0x7b;
const RBRACE = 0x7d;

/** Nesting the parser itself accepts; the caller applies the manifest's (smaller) depth limit to the value. */
const MAX_NESTING = 256;
/** YAML 1.2.2 §7.4.2 / `yaml`: an implicit key's `:` is at most 1024 characters after the key's start. */
const MAX_IMPLICIT_KEY = 1024;

interface Props {
  anchor?: string;
  tag?: string;
  /** Offset of the first property, for errors. */
  at: number;
}

type Ctx = 'doc' | 'map-value' | 'seq-item';

const isFlowIndicator = (c: number) => c === COMMA || c === LBRACK || c === RBRACK || c === LBRACE || c === RBRACE;

/** c-indicator (YAML 1.2.2 §5.3): a plain scalar cannot start with one, apart from `-?:` followed by a safe character. */
function isIndicator(c: number): boolean {
  switch (c) {
    case 0x2d: // -
    case 0x3f: // ?
    case 0x3a: // :
    case 0x2c: // ,
    case 0x5b: // [
    case 0x5d: // ]
    case 0x7b: // {
    case 0x7d: // }
    case 0x23: // #
    case 0x26: // &
    case 0x2a: // *
    case 0x21: // !
    case 0x7c: // |
    case 0x3e: // >
    case 0x27: // '
    case 0x22: // "
    case 0x25: // %
    case 0x40: // @
    case 0x60: // `
      return true;
  }
  return false;
}

export class Parser {
  private readonly s: string;
  private readonly n: number;
  /** Current offset. */
  private i = 0;
  /** Offset where the current line starts. */
  private ls = 0;
  /** Flow collections open around the current position. */
  private flowDepth = 0;
  /** Indentation of the current content line; -1 at the end of the document (EOF or a `---` / `...` marker). */
  private ind = 0;
  private depth = 0;
  /**
   * Anchors by name. A collection's anchor is entered when the collection starts (`node` undefined
   * while it is open), so an alias resolves to the anchor written last before it, as `yaml` does,
   * and an alias inside its own anchor's collection (a cycle) is refused.
   */
  private readonly anchors = new Map<string, { node?: YNode }>();

  constructor(text: string) {
    this.s = text;
    this.n = text.length;
  }

  // ---------- characters and lines ----------

  private c(at = this.i): number {
    return at < this.n ? this.s.charCodeAt(at) : -1;
  }

  /** A line break or the end (a CR is always followed by LF here: index.ts refuses a lone CR up front). */
  private isEol(at = this.i): boolean {
    if (at >= this.n) return true;
    const c = this.s.charCodeAt(at);
    return c === LF || c === CR;
  }

  private isWsOrEol(at: number): boolean {
    const c = this.c(at);
    return c === SP || c === TAB || this.isEol(at);
  }

  // The hot loops work on locals and charCodeAt: at start-up this code runs cold, in the interpreter,
  // where every call counts (BENCH.md).
  private skipInlineWs(): void {
    const s = this.s;
    let i = this.i;
    for (let c = s.charCodeAt(i); c === SP || c === TAB; c = s.charCodeAt(i)) i++;
    this.i = i;
  }

  private skipToEol(): void {
    const j = this.s.indexOf('\n', this.i);
    if (j === -1) this.i = this.n;
    else this.i = j > this.i && this.s.charCodeAt(j - 1) === CR ? j - 1 : j;
  }

  /** Past the line break at `i` (which must be at one), onto the next line. */
  private eatBreak(): void {
    this.i += this.c() === CR ? 2 : 1;
    this.ls = this.i;
  }

  private fail(message: string, at = this.i): never {
    throw new YamlError(message, at);
  }

  private unsupported(what: string, at = this.i): never {
    throw new YamlError(`${what} are not supported in manifests`, at, 'unsupported');
  }

  /** A `---` or `...` marker at the start of the line at `at`. */
  private isMarker(at: number): boolean {
    const c = this.c(at);
    if (c !== DASH && c !== 0x2e) return false;
    return this.c(at + 1) === c && this.c(at + 2) === c && this.isWsOrEol(at + 3);
  }

  /**
   * From the end of a line (or the start of one), on to the next line with content, skipping blank
   * and comment lines. Sets `ind` (-1 at EOF or at a document marker). Tabs may not indent content.
   */
  private nextContentLine(): void {
    if (this.i >= this.n) {
      this.ind = -1;
      return;
    }
    if (this.i !== this.ls) {
      this.skipToEol();
      if (this.i >= this.n) {
        this.ind = -1;
        return;
      }
      this.eatBreak();
    }
    const s = this.s;
    for (;;) {
      const from = this.i;
      let i = from;
      while (s.charCodeAt(i) === SP) i++;
      const k = i - from;
      const start = i;
      for (let c = s.charCodeAt(i); c === SP || c === TAB; c = s.charCodeAt(i)) i++;
      this.i = i;
      const c = i < this.n ? s.charCodeAt(i) : -1;
      if (c === HASH) this.skipToEol();
      else if (c !== -1 && c !== LF && c !== CR) {
        if (this.i !== start) this.fail('tabs are not allowed as indentation', start);
        this.ind = k === 0 && this.isMarker(this.i) ? -1 : k;
        return;
      }
      if (this.i >= this.n) {
        this.ind = -1;
        return;
      }
      this.eatBreak();
    }
  }

  /** After a node that ends mid-line: only spaces and a comment may follow on that line. */
  private finishLine(): void {
    this.skipInlineWs();
    if (this.c() === HASH) {
      const p = this.c(this.i - 1);
      if (p !== SP && p !== TAB) this.fail('a comment must be separated from the content before it by whitespace');
      this.skipToEol();
    }
    if (!this.isEol()) this.fail('unexpected content after a value');
    this.nextContentLine();
  }

  private enter(at: number): void {
    if (++this.depth > MAX_NESTING) throw new YamlError('document nests too deeply to parse', at, 'too-deep');
  }

  // ---------- document ----------

  /** The document's root node, or undefined for an empty document. */
  document(): YNode | undefined {
    // Directives, then `---` (required after a directive), the body, then `...` and comments only.
    this.nextContentLine();
    let directives = false;
    while (this.ind === 0 && this.c() === 0x25 /* % */) {
      this.directive();
      directives = true;
      this.nextContentLine();
    }
    let root: YNode | undefined;
    if (this.ind === -1 && this.i < this.n && this.c() === DASH) {
      this.i += 3; // `---`
      root = this.node(-1, 'doc');
    } else {
      if (directives) this.fail('a directive must be followed by a "---" document start');
      if (this.ind !== -1) root = this.blockNodeAtLineStart(this.ind, undefined, -1);
      else if (this.i < this.n) root = { k: 's', pos: this.i, v: null }; // an empty document closed by `...`
    }
    if (this.ind === -1 && this.i < this.n && this.c() === 0x2e /* . */) {
      this.i += 3; // `...`
      this.nextContentLine();
    }
    if (this.i < this.n) {
      if (this.ind === -1 || this.c() === 0x25) {
        this.fail('the file holds several YAML documents; a manifest is one document');
      }
      this.fail('unexpected content: check the indentation of this line');
    }
    return root;
  }

  private directive(): void {
    const at = this.i;
    const lineEnd = this.s.indexOf('\n', at);
    const line = this.s.slice(at, lineEnd === -1 ? this.n : lineEnd).trimEnd();
    const hash = line.indexOf(' #');
    const d = (hash === -1 ? line : line.slice(0, hash)).trimEnd();
    if (d === '%YAML 1.2') {
      this.skipToEol();
      return;
    }
    if (d.startsWith('%YAML')) this.unsupported(`YAML versions other than 1.2 (${JSON.stringify(d)})`, at);
    this.unsupported(`directives other than %YAML 1.2 (${JSON.stringify(d.length > 30 ? `${d.slice(0, 30)}…` : d)})`, at);
  }

  // ---------- block nodes ----------

  /**
   * A node that starts on the current line after an indicator (`key:`, `- `, `---`): on this line or,
   * when only properties or a comment follow, on the next lines indented more than `parent`.
   */
  private node(parent: number, ctx: Ctx): YNode {
    let tabAt = -1;
    while (this.c() === SP || this.c() === TAB) {
      if (this.c() === TAB && tabAt === -1) tabAt = this.i;
      this.i++;
    }
    // After "- ", a tab before a nested collection (or properties that may start one) would be its indentation.
    const tabIndent = () => {
      if (ctx === 'seq-item' && tabAt !== -1) this.fail('tabs are not allowed as indentation', tabAt);
    };
    if (this.c() === 0x21 || this.c() === 0x26) tabIndent();
    const props = this.props();
    if (this.isEol() || (this.c() === HASH && this.isWsOrEol(this.i - 1))) {
      const emptyAt = this.i; // where `yaml` puts an empty node: after the indicator's whitespace and properties
      this.nextContentLine();
      if (this.ind > parent) return this.blockNodeAtLineStart(this.ind, props, parent);
      if (ctx === 'map-value' && this.ind === parent && this.isSeqEntry(this.i)) return this.blockSeq(this.ind, props);
      if (props && ctx !== 'seq-item') this.noTabLine(emptyAt, this.i);
      else this.tabAfterEmpty(emptyAt, parent, ctx);
      return this.empty(props, emptyAt);
    }
    const c = this.c();
    if (this.isSeqEntry(this.i)) {
      if (ctx === 'map-value') this.fail('a block sequence cannot start on the same line as its mapping key');
      if (props) this.fail('the anchor or tag of a block sequence must be on the line before it', props.at);
      tabIndent();
      if (ctx === 'doc') this.fail('a block sequence cannot start on the "---" line');
      return this.blockSeq(this.i - this.ls, props);
    }
    if (c === 0x7c || c === 0x3e) return this.blockScalar(parent, props);
    if (c === 0x3f && this.isWsOrEol(this.i + 1)) this.unsupported('explicit "? " keys');
    const col = props ? props.at - this.ls : this.i - this.ls;
    const r = this.inline(parent, props, ctx === 'map-value' ? 'value' : 'any');
    if (!r.key) return r.node;
    if (ctx === 'map-value') this.fail('a mapping cannot start on the same line as its key (nested mappings need their own lines)', r.node.pos);
    if (ctx === 'doc') this.fail('a block mapping cannot start on the "---" line', r.node.pos);
    tabIndent();
    return this.blockMap(col, r.node, undefined);
  }

  /** A node whose first line starts at `i`, indented `m` (> parent). `outer`: properties given on an earlier line. */
  private blockNodeAtLineStart(m: number, outer: Props | undefined, parent: number): YNode {
    if (this.isSeqEntry(this.i)) return this.blockSeq(m, outer);
    const c = this.c();
    if (c === 0x3f && this.isWsOrEol(this.i + 1)) this.unsupported('explicit "? " keys');
    const props = this.props();
    if (props && (this.isEol() || this.c() === HASH)) {
      // Properties on a line of their own belong to the node below them.
      if (outer) this.fail('a node has two sets of properties (anchor/tag)', props.at);
      const at = this.i;
      this.nextContentLine();
      if (this.ind > parent) return this.blockNodeAtLineStart(this.ind, props, parent);
      this.noTabLine(at, this.i);
      return this.empty(props, at);
    }
    const c2 = this.c();
    if (c2 === 0x7c || c2 === 0x3e) return this.blockScalar(parent, this.mergeProps(outer, props));
    if (props && this.isSeqEntry(this.i)) this.fail('properties cannot precede a block sequence entry on the same line', props.at);
    const r = this.inline(parent, props, 'any');
    if (r.key) return this.blockMap(m, r.node, outer);
    if (outer) {
      if (props) this.fail('a node has two sets of properties (anchor/tag)', props.at);
      this.applyProps(r.node, outer);
    }
    return r.node;
  }

  /** Properties left without a node: a tab on a blank line after them reads as indentation to `yaml`, which refuses it. */
  private noTabLine(from: number, to: number): void {
    let blank = false;
    for (let j = from; j < to; j++) {
      const c = this.s.charCodeAt(j);
      if (c === LF) blank = true;
      else if (c === TAB && blank) {
        let e = j;
        while (this.c(e) === TAB || this.c(e) === SP) e++;
        if (this.isEol(e)) this.fail('tabs are not allowed as indentation', j);
      } else if (c !== SP && c !== CR) blank = false;
    }
  }

  /**
   * An empty value (`key:` or `-` with nothing after it) followed by blank lines that start with a tab:
   * `yaml` reads such a tab as the empty node's indentation and refuses it (found by the differential
   * test, test/unit/fast-yaml.test.ts) in two cases, matched here exactly:
   * - the document ends on that tab line without a line break (`x:\n\t`, `- \n\t`);
   * - after `key:`, the line right after it is a tab line and the next content is a sibling key at the
   *   mapping's indentation or a `---` marker, with no comment line indented under the key in between
   *   (`x:\n\t\nb: 2`). A sequence entry, a line back at an outer indentation, `...` or the end of the
   *   document after a line break are accepted, as `yaml` accepts them.
   * `from` is the end of the indicator's line, `this.i` the next content (or the end).
   */
  private tabAfterEmpty(from: number, parent: number, ctx: Ctx): void {
    const s = this.s;
    const first = s.indexOf('\n', from) + 1;
    if (first === 0) return;
    const tabLine = (at: number) => {
      if (s.charCodeAt(at) !== TAB) return false;
      let e = at;
      while (this.c(e) === TAB || this.c(e) === SP) e++;
      return this.isEol(e) || e >= this.n;
    };
    if (this.i >= this.n) {
      const last = s.lastIndexOf('\n') + 1;
      if (last >= first && last < this.n && tabLine(last)) this.fail('tabs are not allowed as indentation', last);
      return;
    }
    if (ctx !== 'map-value' || !tabLine(first)) return;
    for (let j = s.indexOf('\n', first) + 1; j > 0 && j < this.ls; j = s.indexOf('\n', j) + 1) {
      let k = j;
      while (s.charCodeAt(k) === SP || s.charCodeAt(k) === TAB) k++;
      if (s.charCodeAt(k) === HASH && k - j > parent) return;
    }
    const marker = this.ind === -1 && s.charCodeAt(this.i) === DASH;
    if (this.ind === parent || marker) this.fail('tabs are not allowed as indentation', first);
  }

  private mergeProps(a: Props | undefined, b: Props | undefined): Props | undefined {
    if (a && b) this.fail('a node has two sets of properties (anchor/tag)', b.at);
    return a ?? b;
  }

  private isSeqEntry(at: number): boolean {
    return this.c(at) === DASH && this.isWsOrEol(at + 1);
  }

  private blockSeq(m: number, props: Props | undefined): YSeq {
    const seq: YSeq = { k: 'q', pos: this.i, items: [] };
    this.openAnchor(seq, props);
    this.enter(this.i);
    for (;;) {
      this.i++; // `-`
      seq.items.push(this.node(m, 'seq-item'));
      if (this.ind < m) break;
      if (this.ind > m) this.fail('bad indentation of a sequence entry (deeper than the entries before it)');
      if (!this.isSeqEntry(this.i)) break; // the mapping this sequence is a value of goes on, or the parent reports the line
    }
    this.depth--;
    return this.finish(seq, props);
  }

  /** A block mapping at indentation `m` whose first key has been read (`i` is after its `:`). */
  private blockMap(m: number, firstKey: YNode, props: Props | undefined): YMap {
    const map: YMap = { k: 'm', pos: firstKey.pos, keys: [], keyNodes: [], vals: [] };
    this.openAnchor(map, props);
    this.enter(firstKey.pos);
    let key = firstKey;
    for (;;) {
      const value = this.node(m, 'map-value');
      this.addPair(map, key, value);
      if (this.ind < m) break;
      if (this.ind > m) this.fail('bad indentation of a mapping entry (deeper than the keys before it)');
      if (this.isSeqEntry(this.i)) this.fail('a sequence entry cannot appear between the keys of a mapping');
      const c = this.c();
      if (c === 0x3f && this.isWsOrEol(this.i + 1)) this.unsupported('explicit "? " keys');
      const kp = this.props();
      const r = this.inline(m, kp, 'key');
      key = r.node;
    }
    this.depth--;
    return this.finish(map, props);
  }

  private addPair(map: YMap, key: YNode, value: YNode): void {
    if (key.k !== 's') this.unsupported(key.k === 'a' ? 'aliases as mapping keys' : 'collections as mapping keys', key.pos);
    const name = key.v === null ? '' : String(key.v);
    // A duplicate is judged on the resulting property name: `1` and "1" are the same key in JS.
    // A set per mapping once it has a few keys, so a mapping with 100,000 keys stays linear.
    let dup = false;
    if (map.keys.length < 8) dup = map.keys.includes(name);
    else {
      let seen = this.keySets.get(map);
      if (!seen) this.keySets.set(map, (seen = new Set(map.keys)));
      dup = seen.has(name);
      seen.add(name);
    }
    if (dup) this.fail(`map keys must be unique: ${JSON.stringify(name.length > 40 ? `${name.slice(0, 40)}…` : name)} is repeated`, key.pos);
    map.keys.push(name);
    map.keyNodes.push(key);
    map.vals.push(value);
  }

  /**
   * A scalar, flow collection or alias in block context at `i`. When it is directly followed by `:`
   * (and a space, for a plain scalar) it is an implicit key: `key` is true and `i` is after the colon.
   * mode 'key': must be a key; 'value': must not be one (the caller reports it); 'any': either.
   */
  private inline(parent: number, props: Props | undefined, mode: 'key' | 'value' | 'any'): { node: YNode; key: boolean } {
    const start = this.i;
    const keyStart = props ? props.at : start;
    const c = this.c();
    let node: YNode;
    let multiLine = false;
    if (c === 0x22 || c === 0x27) {
      const line = this.ls;
      const v = c === 0x22 ? this.doubleQuoted(parent) : this.singleQuoted(parent);
      multiLine = this.ls !== line;
      node = this.scalar(start, v, props, false);
    } else if (c === LBRACK || c === LBRACE) {
      const line = this.ls;
      node = this.flowCollection(parent, props);
      multiLine = this.ls !== line;
      this.applyProps(node, props);
    } else if (c === 0x2a /* * */) {
      node = this.alias();
      if (props) this.fail('an alias cannot have an anchor or tag', props.at);
    } else {
      if (c === -1 || (isIndicator(c) && !((c === DASH || c === 0x3f || c === COLON) && !this.isWsOrEol(this.i + 1)))) {
        if (mode === 'key' || c === -1) this.fail('expected a mapping key ("key: value") here');
        this.fail(`a plain value cannot start with ${JSON.stringify(String.fromCharCode(c))}`);
      }
      const end = this.plainLine(false);
      const text = this.s.slice(start, end);
      if (this.c() === COLON) {
        if (this.i - keyStart > MAX_IMPLICIT_KEY) this.fail(`an implicit key is longer than ${MAX_IMPLICIT_KEY} characters`, keyStart);
        this.i++;
        if (mode === 'value') this.fail('a mapping cannot start on the same line as its key (nested mappings need their own lines)', start);
        return { node: this.scalar(start, text, props, true), key: true };
      }
      if (mode === 'key') this.fail('expected a mapping key ("key: value") here', keyStart);
      const full = this.plainRest(text, parent, start);
      return { node: this.scalar(start, full, props, true), key: false };
    }
    this.skipInlineWs();
    if (this.c() === COLON) {
      // In block context the `:` of a key is followed by whitespace even after a quoted key (§8.2.2).
      if (!this.isWsOrEol(this.i + 1)) this.fail('a space is required after the ":" of a mapping key', this.i + 1);
      if (node.k !== 's') this.unsupported(node.k === 'a' ? 'aliases as mapping keys' : 'collections as mapping keys', node.pos);
      if (multiLine) this.fail('an implicit key must be on a single line', start);
      if (this.i - keyStart > MAX_IMPLICIT_KEY) this.fail(`an implicit key is longer than ${MAX_IMPLICIT_KEY} characters`, keyStart);
      this.i++;
      if (mode === 'value') this.fail('a mapping cannot start on the same line as its key (nested mappings need their own lines)', start);
      return { node, key: true };
    }
    if (mode === 'key') this.fail('expected a mapping key ("key: value") here', keyStart);
    this.finishLine();
    return { node, key: false };
  }

  /**
   * One line of a plain scalar in block (flow=false) or flow context, from `i`: stops at `: ` (or `:`
   * at the end of the line), ` #`, the end of the line, and in flow context at `,[]{}` and `:` before
   * one of them. Leaves `i` at the stop; returns the end of the text without trailing whitespace.
   */
  private plainLine(flow: boolean): number {
    const s = this.s;
    const n = this.n;
    let i = this.i;
    let end = i;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c === LF || c === CR) break;
      if (c === COLON) {
        const d = i + 1 < n ? s.charCodeAt(i + 1) : LF;
        if (d === SP || d === TAB || d === LF || d === CR || (flow && isFlowIndicator(d))) break;
      } else if (c === HASH) {
        const p = s.charCodeAt(i - 1);
        if (p === SP || p === TAB) break;
      } else if (flow && isFlowIndicator(c)) break;
      if (c !== SP && c !== TAB) end = i + 1;
    }
    this.i = i;
    return end;
  }

  /**
   * The continuation lines of a block plain scalar (YAML 1.2.2 §7.3.3): lines indented more than
   * `parent`, folded (a line break is a space, each blank line a newline). Leaves `i` on the next
   * content line, like every block node.
   */
  private plainRest(first: string, parent: number, start: number): string {
    let text = first;
    for (;;) {
      // Look ahead without moving: the rest of this line, blank lines, the next line's indentation.
      let j = this.i;
      while (this.c(j) === SP || this.c(j) === TAB) j++;
      if (j >= this.n || !this.isEol(j)) break; // the end, or a comment: it ends the scalar
      let ls = j;
      let blank = -1;
      let k = 0;
      let tabAt = -1;
      for (;;) {
        blank++;
        j += this.s.charCodeAt(j) === CR ? 2 : 1;
        ls = j;
        k = 0;
        while (this.c(j) === SP) {
          j++;
          k++;
        }
        const ws = j;
        while (this.c(j) === SP || this.c(j) === TAB) j++;
        if (j >= this.n || !this.isEol(j)) break;
        if (k <= parent && j > ws && tabAt === -1) tabAt = ws;
      }
      if (j >= this.n || k <= parent || this.c(j) === HASH || (k === 0 && this.isMarker(ls))) break;
      // A tab where the block's indentation is, on a blank line inside the scalar: refused, as `yaml` does.
      if (tabAt !== -1) this.fail('tabs are not allowed as indentation', tabAt);
      this.i = j;
      this.ls = ls;
      const end = this.plainLine(false);
      if (this.c() === COLON) this.fail('a mapping key must be on a single line (nested mappings are not allowed in a multi-line value)', start);
      text += (blank === 0 ? ' ' : '\n'.repeat(blank)) + this.s.slice(j, end);
    }
    this.finishLine();
    return text;
  }

  private scalar(pos: number, v: string, props: Props | undefined, plain: boolean): YScalar {
    let value: unknown;
    if (props?.tag) value = resolveTagged(props.tag, v, props.at);
    else value = plain ? resolvePlain(v) : v;
    const node: YScalar = { k: 's', pos, v: value, src: v };
    if (props?.anchor !== undefined) this.define(props.anchor, node);
    return node;
  }

  /** An empty node (`key:` with nothing after it): null, or '' with !!str / !. */
  private empty(props: Props | undefined, pos: number): YScalar {
    let v: unknown = null;
    if (props?.tag) {
      if (props.tag === 'str' || props.tag === '!') v = '';
      else if (props.tag !== 'null') this.fail(`an empty value is not a valid !!${props.tag}`, props.at);
    }
    const node: YScalar = { k: 's', pos, v };
    if (props?.anchor !== undefined) this.define(props.anchor, node);
    return node;
  }

  /** Tags and anchors on a collection: only !!map / !!seq / ! fit. */
  private applyProps(node: YNode, props: Props | undefined): void {
    if (!props) return;
    if (node.k === 'a') this.fail('an alias cannot have an anchor or tag', props.at);
    if (node.k === 's' && props.tag && node.src !== undefined) node.v = resolveTagged(props.tag, node.src, props.at);
    else if (props.tag && props.tag !== '!') {
      const want = node.k === 'm' ? 'map' : node.k === 'q' ? 'seq' : undefined;
      if (props.tag !== want) this.fail(`a ${node.k === 'm' ? 'mapping' : node.k === 'q' ? 'sequence' : 'node'} cannot have the tag !!${props.tag}`, props.at);
    }
    if (props.anchor !== undefined) this.define(props.anchor, node);
  }

  private finish<T extends YMap | YSeq>(node: T, props: Props | undefined): T {
    this.applyProps(node, props);
    return node;
  }

  private define(name: string, node: YNode): void {
    (node as YScalar).anchor = name;
    const open = this.opened.get(node);
    if (open) {
      // Still the latest anchor of that name (no later node took it over inside the collection)?
      if (this.anchors.get(name) === open) open.node = node;
    } else this.anchors.set(name, { node });
  }

  private readonly opened = new Map<YNode, { node?: YNode }>();
  private readonly keySets = new Map<YMap, Set<string>>();

  /** A collection with an anchor starts: its name now means this (open) collection. */
  private openAnchor(node: YNode, props: Props | undefined): void {
    if (props?.anchor === undefined) return;
    const entry = {};
    this.anchors.set(props.anchor, entry);
    this.opened.set(node, entry);
  }

  // ---------- properties and aliases ----------

  /** `&anchor` and `!tag`, in either order, each at most once, each followed by whitespace. */
  private props(inFlowSeq = false): Props | undefined {
    let props: Props | undefined;
    for (;;) {
      const c = this.c();
      if (c === 0x26 /* & */) {
        if (props?.anchor !== undefined) this.fail('a node can have only one anchor');
        props ??= { at: this.i };
        this.i++;
        props.anchor = this.name('anchor');
      } else if (c === 0x21 /* ! */) {
        if (props?.tag !== undefined) this.fail('a node can have only one tag');
        props ??= { at: this.i };
        props.tag = this.tag();
      } else return props;
      const d = this.c();
      // As `yaml` reads it: an end of entry may touch a property; in a flow sequence, a tag may touch a `[` or a quote (`[![a], !!str"b"]`).
      const touching = d === COMMA || d === RBRACK || d === RBRACE || (c === 0x21 && inFlowSeq && (d === LBRACK || d === 0x22 || d === 0x27));
      if (!this.isWsOrEol(this.i) && !touching) this.fail('an anchor or tag must be followed by whitespace');
      this.skipInlineWs();
    }
  }

  private name(what: string): string {
    const start = this.i;
    for (;;) {
      const c = this.c();
      if (c === -1 || c === SP || c === TAB || c === LF || c === CR || isFlowIndicator(c)) break;
      this.i++;
    }
    if (this.i === start) this.fail(`an ${what} needs a name`);
    if (this.s.charCodeAt(this.i - 1) === COLON) this.fail(`an ${what} name cannot end with ":" (put a space before the colon)`, start);
    return this.s.slice(start, this.i);
  }

  /** A core tag's short name (`str`, `int`, …, `map`, `seq`) or '!' for the non-specific tag. */
  private tag(): string {
    const at = this.i;
    let end = at;
    if (this.c(at + 1) === 0x3c /* < */) {
      while (end < this.n && this.s.charCodeAt(end) !== 0x3e && !this.isWsOrEol(end)) end++;
      if (this.c(end) === 0x3e) end++;
    } else {
      for (; end < this.n && !this.isWsOrEol(end); end++) {
        const c = this.s.charCodeAt(end);
        if (isFlowIndicator(c) || c === 0x22 || c === 0x27) break;
      }
    }
    const text = this.s.slice(at, end);
    this.i = end;
    let name: string | undefined;
    if (text === '!') return '!';
    if (text.startsWith('!!')) name = text.slice(2);
    else if (text.startsWith('!<tag:yaml.org,2002:') && text.endsWith('>')) name = text.slice(20, -1);
    switch (name) {
      case 'str':
      case 'int':
      case 'float':
      case 'bool':
      case 'null':
      case 'map':
      case 'seq':
        return name;
    }
    throw new YamlError(`unknown tag ${JSON.stringify(text)}: manifests use the core tags !!str !!int !!float !!bool !!null !!map !!seq`, at, 'unsupported');
  }

  private alias(): YAlias {
    const pos = this.i;
    this.i++;
    const name = this.name('alias');
    const entry = this.anchors.get(name);
    if (!entry) this.fail(`unknown anchor "${name}": an alias must follow its anchor's node`, pos);
    const target = entry.node;
    if (!target) this.unsupported('recursive aliases (an alias inside the node of its own anchor)', pos);
    return { k: 'a', pos, name, target };
  }

  // ---------- quoted scalars ----------

  /**
   * After a line break inside a quoted or flow scalar: skip the break, blank lines and indentation.
   * Returns the number of blank lines. A continuation line must be indented more than `parent`
   * and cannot be a document marker.
   */
  private foldBreaks(parent: number, what: string, openAt: number): number {
    let blank = 0;
    for (;;) {
      if (this.i >= this.n) this.fail(`${what} is not closed`, openAt);
      this.eatBreak();
      let k = 0;
      while (this.c() === SP) {
        this.i++;
        k++;
      }
      const ws = this.i;
      this.skipInlineWs();
      if (this.isEol()) {
        // A tab where the block's indentation is (`yaml` refuses it too).
        if (k <= parent && this.i > ws) this.fail('tabs are not allowed as indentation', ws);
        blank++;
        continue;
      }
      if (k === 0 && this.isMarker(this.ls)) this.fail(`${what} is not closed before the document marker`, openAt);
      if (k <= parent) this.fail(`${what} continues on a line that is not indented enough`, this.i);
      return blank;
    }
  }

  private singleQuoted(parent: number): string {
    const open = this.i;
    this.i++;
    let out = '';
    let from = this.i;
    const src = this.s;
    for (;;) {
      let i = this.i;
      for (let d = src.charCodeAt(i); i < this.n && d !== 0x27 && d !== LF && d !== CR; d = src.charCodeAt(i)) i++;
      this.i = i;
      const c = this.c();
      if (c === -1) this.fail('a single-quoted string is not closed', open);
      if (c === 0x27) {
        if (this.c(this.i + 1) === 0x27) {
          out += this.s.slice(from, this.i + 1);
          this.i += 2;
          from = this.i;
          continue;
        }
        out += this.s.slice(from, this.i);
        this.i++;
        return out;
      }
      if (c === LF || (c === CR && this.c(this.i + 1) === LF)) {
        out = trimWs(out + this.s.slice(from, this.i), 0);
        const blank = this.foldBreaks(parent, 'a single-quoted string', open);
        out += blank === 0 ? ' ' : '\n'.repeat(blank);
        from = this.i;
        continue;
      }
      this.i++;
    }
  }

  private doubleQuoted(parent: number): string {
    const open = this.i;
    this.i++;
    let out = '';
    let from = this.i;
    /** Length of `out` that escapes produced: trailing whitespace before a line break is trimmed only after it. */
    let kept = 0;
    const src = this.s;
    for (;;) {
      let i = this.i;
      for (let d = src.charCodeAt(i); i < this.n && d !== 0x22 && d !== 0x5c && d !== LF && d !== CR; d = src.charCodeAt(i)) i++;
      this.i = i;
      const c = this.c();
      if (c === -1) this.fail('a double-quoted string is not closed', open);
      if (c === 0x22) {
        out += this.s.slice(from, this.i);
        this.i++;
        return out;
      }
      if (c === 0x5c /* \ */) {
        out += this.s.slice(from, this.i);
        const at = this.i;
        const e = this.s[this.i + 1];
        if (this.isEol(this.i + 1) && this.i + 1 < this.n) {
          // An escaped line break: joined without a space, the next line's indentation dropped.
          this.i++;
          const blank = this.foldBreaks(parent, 'a double-quoted string', open);
          // Blank lines after it are line feeds by the spec (§7.3.1) but a space to `yaml`: refused as ambiguous.
          if (blank > 0) this.fail('an escaped line break ("\\" at the end of a line) followed by a blank line is ambiguous; remove the blank line or the "\\"', at);
          kept = out.length;
          from = this.i;
          continue;
        }
        const simple = e === undefined ? undefined : ESCAPES[e];
        if (simple !== undefined) {
          out += simple;
          this.i += 2;
        } else if (e === 'x' || e === 'u' || e === 'U') {
          const len = e === 'x' ? 2 : e === 'u' ? 4 : 8;
          if (!isHex(this.s, this.i + 2, this.i + 2 + len)) this.fail(`invalid escape \\${e}: expected ${len} hex digits`, at);
          const code = parseInt(this.s.substr(this.i + 2, len), 16);
          if (code > 0x10ffff) this.fail(`invalid escape: U+${code.toString(16)} is beyond Unicode`, at);
          out += e === 'U' ? String.fromCodePoint(code) : String.fromCharCode(code);
          this.i += 2 + len;
        } else this.fail(`invalid escape sequence \\${e ?? ''}`, at);
        kept = out.length;
        from = this.i;
        continue;
      }
      if (c === LF || (c === CR && this.c(this.i + 1) === LF)) {
        out = trimWs(out + this.s.slice(from, this.i), kept);
        const blank = this.foldBreaks(parent, 'a double-quoted string', open);
        out += blank === 0 ? ' ' : '\n'.repeat(blank);
        kept = out.length;
        from = this.i;
        continue;
      }
      this.i++;
    }
  }

  // ---------- flow collections ----------

  /** Whitespace, line breaks and comments inside a flow collection; continuation lines indented more than `parent`. */
  private flowWs(parent: number, openAt: number): void {
    for (;;) {
      const c = this.c();
      if (c === SP || c === TAB) this.i++;
      else if (c === HASH) {
        const p = this.c(this.i - 1);
        if (!(p === SP || p === TAB || this.i === this.ls)) this.fail('a comment must be separated from the content before it by whitespace');
        this.skipToEol();
      } else if (c === LF || (c === CR && this.c(this.i + 1) === LF)) {
        this.eatBreak();
        let k = 0;
        while (this.c() === SP) {
          this.i++;
          k++;
        }
        if (k === 0 && this.isMarker(this.i)) this.fail('a flow collection is not closed before the document marker', openAt);
        let j = this.i;
        while (this.c(j) === SP || this.c(j) === TAB) j++;
        const d = this.c(j);
        // A closing bracket may sit at the parent's own indentation (as `yaml` reads it) when it closes the
        // outermost flow collection; one that closes a nested collection there is refused, as `yaml` does.
        const closing = d === RBRACK || d === RBRACE;
        if (!this.isEol(j) && d !== HASH && (closing ? k < parent || (k === parent && this.flowDepth > 1) : k <= parent))
          this.fail('a flow collection continues on a line that is not indented enough', j);
      } else if (c === -1) this.fail(`a flow ${this.s[openAt] === '[' ? 'sequence' : 'mapping'} is not closed`, openAt);
      else return;
    }
  }

  private flowCollection(parent: number, props: Props | undefined): YMap | YSeq {
    const open = this.i;
    const isSeq = this.c() === LBRACK;
    const close = isSeq ? RBRACK : RBRACE;
    this.enter(open);
    this.flowDepth++;
    this.i++;
    const node: YMap | YSeq = isSeq ? { k: 'q', pos: open, items: [] } : { k: 'm', pos: open, keys: [], keyNodes: [], vals: [] };
    this.openAnchor(node, props);
    for (;;) {
      this.flowWs(parent, open);
      if (this.c() === close) {
        this.i++;
        break;
      }
      if (this.c() === COMMA) this.fail('an empty entry in a flow collection');
      if (this.c() === 0x3f && this.isWsOrEol(this.i + 1)) this.unsupported('explicit "? " keys');
      const entryAt = this.i;
      const entryLine = this.ls;
      const props = this.props(isSeq);
      this.flowWs(parent, open);
      let first: YNode | undefined;
      let jsonLike = false;
      if (this.c() === COLON && (this.isWsOrEol(this.i + 1) || isFlowIndicator(this.c(this.i + 1)))) {
        this.unsupported('empty mapping keys', this.i);
      } else {
        const cc = this.c();
        if (!isSeq && (cc === COMMA || cc === close)) this.unsupported('empty mapping keys', entryAt);
        jsonLike = cc === 0x22 || cc === 0x27 || cc === LBRACK || cc === LBRACE;
        first = this.flowNode(parent, open, props);
      }
      this.flowWs(parent, open);
      if (this.c() === COLON && (jsonLike || this.isWsOrEol(this.i + 1) || isFlowIndicator(this.c(this.i + 1)))) {
        if (isSeq && this.ls !== entryLine) this.fail('the key of a pair in a flow sequence must be on a single line', entryAt);
        if (isSeq && this.i - entryAt > MAX_IMPLICIT_KEY) this.fail(`an implicit key is longer than ${MAX_IMPLICIT_KEY} characters`, entryAt);
        this.i++;
        this.flowWs(parent, open);
        const cc = this.c();
        const value = cc === COMMA || cc === close ? this.empty(undefined, this.i) : this.flowNode(parent, open, this.propsInFlow(parent, open));
        if (isSeq) {
          const pair: YMap = { k: 'm', pos: first!.pos, keys: [], keyNodes: [], vals: [] };
          this.addPair(pair, first!, value);
          (node as YSeq).items.push(pair);
        } else this.addPair(node as YMap, first!, value);
      } else if (isSeq) (node as YSeq).items.push(first!);
      else this.addPair(node as YMap, first!, this.empty(undefined, this.i));
      this.flowWs(parent, open);
      const cc = this.c();
      if (cc === COMMA) this.i++;
      else if (cc !== close) {
        const found = cc === -1 ? 'the end of the file' : JSON.stringify(String.fromCharCode(cc));
        this.fail(`expected "," or "${isSeq ? ']' : '}'}" in a flow ${isSeq ? 'sequence' : 'mapping'}, found ${found}`);
      }
    }
    this.depth--;
    this.flowDepth--;
    return node;
  }

  private propsInFlow(parent: number, open: number): Props | undefined {
    const p = this.props();
    if (p) this.flowWs(parent, open);
    return p;
  }

  /** A node inside a flow collection: scalar (plain ones may span lines), nested collection or alias. */
  private flowNode(parent: number, open: number, props: Props | undefined): YNode {
    const c = this.c();
    const start = this.i;
    if (c === 0x22 || c === 0x27) {
      const v = c === 0x22 ? this.doubleQuoted(parent) : this.singleQuoted(parent);
      return this.scalar(start, v, props, false);
    }
    if (c === LBRACK || c === LBRACE) {
      const node = this.flowCollection(parent, props);
      this.applyProps(node, props);
      return node;
    }
    if (c === 0x2a) {
      if (props) this.fail('an alias cannot have an anchor or tag', props.at);
      return this.alias();
    }
    if (c === COMMA || c === RBRACK || c === RBRACE) return this.empty(props, start);
    if (isIndicator(c) && !((c === DASH || c === 0x3f || c === COLON) && !this.isWsOrEol(this.i + 1) && !isFlowIndicator(this.c(this.i + 1)))) {
      this.fail(`a plain value cannot start with ${JSON.stringify(String.fromCharCode(c))}`);
    }
    let end = this.plainLine(true);
    let text = this.s.slice(start, end);
    // Multi-line plain scalars in flow context fold like block ones.
    for (;;) {
      const save = this.i;
      const saveLs = this.ls;
      this.skipInlineWs();
      if (!this.isEol() || this.i >= this.n) {
        this.i = save;
        break;
      }
      let blank = -1;
      let k = 0;
      do {
        blank++;
        this.eatBreak();
        k = 0;
        while (this.c() === SP) {
          this.i++;
          k++;
        }
        this.skipInlineWs();
      } while (this.isEol() && this.i < this.n);
      const d = this.c();
      if (d === -1 || d === HASH || isFlowIndicator(d) || (d === COLON && (this.isWsOrEol(this.i + 1) || isFlowIndicator(this.c(this.i + 1))))) {
        this.i = save;
        this.ls = saveLs;
        break;
      }
      if (k === 0 && this.isMarker(this.ls)) this.fail('a flow collection is not closed before the document marker', open);
      if (k <= parent) this.fail('a flow collection continues on a line that is not indented enough', this.i);
      const segStart = this.i;
      end = this.plainLine(true);
      text += (blank === 0 ? ' ' : '\n'.repeat(blank)) + this.s.slice(segStart, end);
    }
    return this.scalar(start, text, props, true);
  }

  // ---------- block scalars ----------

  /** `|` literal or `>` folded (YAML 1.2.2 §8.1), with chomping (+ -) and an indentation indicator (1-9). */
  private blockScalar(parent: number, props: Props | undefined): YScalar {
    const pos = this.i;
    const folded = this.c() === 0x3e;
    this.i++;
    let chomp: 'clip' | 'strip' | 'keep' = 'clip';
    let explicit = 0;
    for (let k = 0; k < 2; k++) {
      const c = this.c();
      if ((c === 0x2b || c === DASH) && chomp === 'clip') {
        chomp = c === 0x2b ? 'keep' : 'strip';
        this.i++;
      } else if (c >= 0x31 && c <= 0x39 && explicit === 0) {
        explicit = c - 0x30;
        this.i++;
      }
    }
    const before = this.i;
    this.skipInlineWs();
    if (this.c() === HASH && this.i > before) this.skipToEol();
    if (!this.isEol()) this.fail('invalid block scalar header: expected an indentation digit 1-9, chomping + or -, or a comment', pos);
    const base = parent < 0 ? 0 : parent;
    let indent = explicit ? base + explicit : -1; // -1: not detected yet (0 is a valid indentation at the top level)
    const lines: string[] = [];
    /** Spaces of each whitespace-only line (-1 for a content line): see the trailing-line rule below. */
    const spacesOnly: number[] = [];
    /** Leading spaces of the first content line. */
    let firstK = -1;
    let maxBlank = 0;
    let maxBlankAt = 0;
    // Line by line: `i` at the break ending the previous line.
    while (this.i < this.n) {
      const lineStart = this.i + (this.c() === CR ? 2 : 1);
      let j = lineStart;
      while (this.c(j) === SP) j++;
      const k = j - lineStart;
      if (this.isEol(j)) {
        // Spaces at the very end: content when deeper than the indentation, else no line at all.
        if (j >= this.n && (indent === -1 || k <= indent)) break;
        if (indent === -1 && k > maxBlank) {
          maxBlank = k;
          maxBlankAt = j;
        }
        lines.push(indent !== -1 && k > indent ? this.s.slice(lineStart + indent, j) : '');
        spacesOnly.push(k);
        this.i = j;
        this.ls = lineStart;
        continue;
      }
      if (indent === -1) {
        if (k <= parent || (k === 0 && parent < 0 && this.isMarker(lineStart))) break;
        if (maxBlank > k) this.fail('a block scalar has leading blank lines indented more than its first line: use an indentation indicator', maxBlankAt);
        indent = k;
        for (let b = 0; b < lines.length; b++) lines[b] = '';
      }
      if (k < indent && this.s.charCodeAt(j) === TAB) {
        let e = j;
        while (this.c(e) === TAB || this.c(e) === SP) e++;
        if (this.isEol(e)) this.fail('a tab in the indentation of a block scalar line', j);
      }
      if (k === 0 && this.isMarker(lineStart)) break;
      if (k < indent) {
        // Less indented than the content but inside the parent: refused, as `yaml` does (comments too).
        if (k > parent && this.s.charCodeAt(j) !== HASH) this.fail('a block scalar line is less indented than its first line', j);
        break;
      }
      if (k === 0 && this.isMarker(lineStart)) break;
      let e = j;
      while (!this.isEol(e)) e++;
      lines.push(this.s.slice(lineStart + indent, e));
      spacesOnly.push(-1);
      if (firstK === -1) firstK = k;
      this.i = e;
      this.ls = lineStart;
    }
    // Only spaces on every line (an explicit indentation below them): no content, as `yaml` reads it.
    let onlySpaces = true;
    for (let b = 0; b < lines.length && onlySpaces; b++) {
      const l = lines[b];
      for (let x = 0; x < l.length; x++) if (l.charCodeAt(x) !== SP) onlySpaces = false;
    }
    if (onlySpaces) for (let b = 0; b < lines.length; b++) lines[b] = '';
    // Trailing blank lines belong to chomping, not to the content. With an indentation indicator, `yaml`
    // also counts a trailing spaces-only line as blank when it is no deeper than the first content line
    // (it measures trailing lines against that line, not the indicator); read the same way here.
    let last = lines.length - 1;
    while (last >= 0 && (lines[last] === '' || (explicit && spacesOnly[last]! >= 0 && spacesOnly[last]! <= firstK))) last--;
    if (explicit) for (let b = last + 1; b < lines.length; b++) lines[b] = '';
    let text = '';
    if (folded) {
      let prevMore = true;
      let blank = 0;
      let seen = false;
      for (let b = 0; b <= last; b++) {
        const l = lines[b];
        if (l === '') {
          blank++;
          continue;
        }
        const more = l.charCodeAt(0) === SP || l.charCodeAt(0) === TAB;
        if (!seen) text += '\n'.repeat(blank);
        else if (!more && !prevMore) text += blank === 0 ? ' ' : '\n'.repeat(blank);
        else text += '\n'.repeat(blank + 1);
        text += l;
        seen = true;
        prevMore = more;
        blank = 0;
      }
    } else if (last >= 0) text = lines.slice(0, last + 1).join('\n');
    const trailing = lines.length - 1 - last;
    if (chomp === 'keep') text += '\n'.repeat(trailing + (last >= 0 ? 1 : 0));
    else if (chomp === 'clip' && last >= 0) text += '\n';
    this.nextContentLine();
    const node: YScalar = { k: 's', pos, v: props?.tag ? resolveTagged(props.tag, text, props.at) : text };
    if (props?.anchor !== undefined) this.define(props.anchor, node);
    return node;
  }
}

/** `s` without trailing spaces/tabs, never cutting into the first `keep` characters (escapes). */
function trimWs(s: string, keep: number): string {
  let e = s.length;
  while (e > keep && (s.charCodeAt(e - 1) === SP || s.charCodeAt(e - 1) === TAB)) e--;
  return e === s.length ? s : s.slice(0, e);
}
