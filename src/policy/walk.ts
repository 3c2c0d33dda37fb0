// Bounded, iterative, depth-first walk over every string in a JSON-like value (tool arguments).
// Shared by the policy checks that look inside `claw.tool.call` arguments (spec §9.3.2):
// `conditions.path_within` (evaluate.ts), input validation and prompt-injection detection.
//
// - Order: pre-order, object keys in insertion order, array elements in index order. For an
//   object, all its keys are visited (where: 'key') before any of its values.
// - Bounded: at most `maxDepth` levels of nesting (default 128, the protocol's own bound,
//   src/protocol/depth.ts) and `maxNodes` visited values. Exceeding a bound stops the walk and
//   returns 'limit'; every caller treats that as a failure (fail closed).
// - Iterative (explicit stack): hostile nesting can never exhaust the JS stack.
// - Only plain data is walked: strings, arrays and objects' own enumerable string keys. Other
//   values (numbers, booleans, null, undefined) are leaves with no string to report.
import { DEFAULT_MAX_DEPTH } from '../protocol/depth.ts';

export interface WalkLimits {
  maxDepth: number;
  maxNodes: number;
}

export const DEFAULT_WALK_LIMITS: WalkLimits = { maxDepth: DEFAULT_MAX_DEPTH, maxNodes: 1_000_000 };

/** Linked path segments: cheap to extend, turned into text only when someone asks. */
interface PathNode {
  parent: PathNode | undefined;
  seg: string | number;
}

export interface StringVisit {
  /** The string itself (an object key, or a string value). */
  text: string;
  where: 'key' | 'value';
  /**
   * The nearest object key that owns this value: the entry's key for `{k: "v"}`, and the same key
   * for the elements of an array held under it (`{k: ["a", "b"]}`). Undefined for a top-level
   * string or one inside a top-level array. For a key visit it is the key itself.
   */
  ownerKey: string | undefined;
  /** JSONPath-like location (`$.a.b[0]`, `$["odd key"]`), built on demand. */
  path(): string;
}

export type WalkOutcome = 'done' | 'stopped' | 'limit';

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const MAX_KEY_IN_PATH = 64;

/** Quotes a key for display: ASCII-only (controls, bidi and non-ASCII escaped), truncated. */
function quoteKey(key: string): string {
  const short = key.length > MAX_KEY_IN_PATH ? key.slice(0, MAX_KEY_IN_PATH) : key;
  let out = '';
  for (let i = 0; i < short.length; i++) {
    const c = short.charCodeAt(i);
    if (c === 0x22 || c === 0x5c) out += `\\${short[i]}`;
    else if (c >= 0x20 && c < 0x7f) out += short[i];
    else out += `\\u${c.toString(16).padStart(4, '0')}`;
  }
  return `["${out}${short.length < key.length ? '...' : ''}"]`;
}

/** `path` extended by one segment, in the format of formatPath(). */
export function appendPath(path: string, s: string | number): string {
  return path + (typeof s === 'number' ? `[${s}]` : IDENT.test(s) && s.length <= MAX_KEY_IN_PATH ? `.${s}` : quoteKey(s));
}

export function formatPath(node: PathNode | undefined): string {
  const segs: (string | number)[] = [];
  for (let n = node; n; n = n.parent) segs.push(n.seg);
  let out = '$';
  for (let i = segs.length - 1; i >= 0; i--) out = appendPath(out, segs[i]);
  return out;
}

interface Frame {
  value: unknown;
  node: PathNode | undefined;
  depth: number;
  ownerKey: string | undefined;
}

/**
 * Calls `visit` for every string in `value` (keys and values). `visit` returns `false` to stop
 * early ('stopped'); anything else continues.
 */
export function walkStrings(
  value: unknown,
  visit: (v: StringVisit) => boolean | void,
  limits: WalkLimits = DEFAULT_WALK_LIMITS,
): WalkOutcome {
  const stack: Frame[] = [{ value, node: undefined, depth: 0, ownerKey: undefined }];
  let nodes = 0;
  while (stack.length > 0) {
    const f = stack.pop()!;
    if (++nodes > limits.maxNodes) return 'limit';
    const v = f.value;
    if (typeof v === 'string') {
      const node = f.node;
      if (visit({ text: v, where: 'value', ownerKey: f.ownerKey, path: () => formatPath(node) }) === false) return 'stopped';
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    if (f.depth >= limits.maxDepth) return 'limit';
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) {
        stack.push({ value: v[i], node: { parent: f.node, seg: i }, depth: f.depth + 1, ownerKey: f.ownerKey });
      }
      continue;
    }
    const keys = Object.keys(v);
    // Keys are visited here, in order, before any value below this object: a key can stop the
    // walk early, and the values keep their pre-order position on the stack.
    for (const k of keys) {
      const node: PathNode = { parent: f.node, seg: k };
      if (visit({ text: k, where: 'key', ownerKey: k, path: () => formatPath(node) }) === false) return 'stopped';
    }
    for (let i = keys.length - 1; i >= 0; i--) {
      const k = keys[i];
      stack.push({ value: (v as Record<string, unknown>)[k], node: { parent: f.node, seg: k }, depth: f.depth + 1, ownerKey: k });
    }
  }
  return 'done';
}
