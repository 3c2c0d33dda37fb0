// Policy rule evaluation for one tool call (spec §5.9 "Validation Rules", "Rule Actions").
//
// Ordering (spec §5.9):
//   - The rules of all policies are one concatenated list, in the order the policies are given;
//     rules are tried in array order; the FIRST matching rule decides; later rules are not tried.
//   - No rule matches → deny, reported with `implicit: true` (implicit default-deny).
//
// Which policies apply to a call — composeForCall():
//   The tool's own `policy_ref` policy (spec §5.4) comes FIRST, then the manifest's `policies` in
//   manifest order, without repeating the ref'd policy. This is the "override pattern" of runtime
//   profile §9: the specific policy is placed before the general one, so its rules win under
//   first-match. Consequence, by design: a tool policy ending in a catch-all rule (`scope: all`)
//   decides every call of that tool on its own, and the manifest's rules are never reached.
//
// Matching a rule (all parts must hold):
//   1. scope (spec §5.9 schema):
//      - `all`      every call.
//      - `tool`     every tool (a tool rule without `match` matches every tool).
//      - `category` the call's category (metadata.labels.category, spec §5.4) equals
//                   `match.category`. A call with no category never matches; a category rule
//                   without `match.category` matches nothing (fail closed; see ruleIssues()).
//   2. match: every criterion present in `match` must hold, whatever the scope (a `match` only
//      narrows a rule; ignoring it would silently widen an `allow`):
//      - `match.annotations`: each entry deep-equals the tool's annotation of that name (JSON
//        deep equality: arrays ordered, objects by key set). An absent annotation never equals a
//        present value, `null` included. MCP's default hint values (e.g. destructiveHint
//        defaulting to true) are NOT filled in: a rule on `destructiveHint: true` does not match a
//        tool that does not declare it — such a tool falls through to later rules and, at worst,
//        to the implicit deny. Annotations are untrusted hints (spec §5.4).
//      - `match.category`: equals the call's category (no category → no match).
//   3. conditions (additionalProperties: true in the official schema; the official `match` is
//      closed, so name- and skill-targeting live here, never as new `match` keys):
//      - `tool`: a tool name, a glob (`*` any run of characters, `?` one character; no other
//        metacharacters) or a list of them; the call's tool must match one. `[]` matches none.
//      - `skill`: likewise, for the skill the call is made on behalf of. A call made directly by
//        the operator has no skill and never satisfies a `skill` condition.
//      - `path_within`: every path-like string argument must lie within the directory after
//        lexical normalization (`.`/`..`/`//` resolved; no filesystem access — real-path and
//        symlink checks are the sandbox's job). Path-like means a string value whose key (at any
//        depth; array elements take the key of their array) is `path`, `file`, `filename`,
//        `dir`, `directory` or `cwd`, or ends in `_path` / `_dir` — compared case-insensitively.
//        A call with NO path-like argument does not satisfy path_within (the rule did not get
//        the evidence it asked for). Relative paths — and a relative `path_within` — are
//        resolved against `call.cwd` (the runtime-supplied working directory of the tool); with
//        no `cwd` they cannot be placed and the condition fails. Strings containing U+0000 fail.
//        Arguments nested beyond the walk bounds (walk.ts) fail.
//      - any other key, or a known key with a value of the wrong type: the condition cannot be
//        understood, so the rule does NOT match (fail closed). unknownConditionKeys() /
//        ruleIssues() list them so the loader can warn.
import type { PolicySpec } from '../manifest/schema/index.ts';
import { walkStrings } from './walk.ts';

export type RuleAction = 'allow' | 'deny' | 'require-approval' | 'audit-only';
export type PolicyRule = PolicySpec['rules'][number];

export interface NamedPolicy {
  name: string;
  spec: PolicySpec;
}

export interface PolicyCall {
  tool: string;
  /** metadata.labels.category of the tool (spec §5.4). */
  category?: string;
  /** The tool's annotations (spec §5.4; untrusted hints). */
  annotations: Record<string, unknown>;
  /** Skill the call is made on behalf of; absent for calls made directly by the operator. */
  skill?: string;
  /** The call's `arguments`. */
  args: unknown;
  /**
   * Absolute directory the tool resolves relative paths against (its sandbox working directory).
   * Supplied by the runtime, never taken from the arguments. Without it, relative paths fail
   * `path_within`.
   */
  cwd?: string;
}

export interface ApprovalParams {
  timeout_seconds?: number;
  default_if_timeout?: 'deny' | 'allow';
}

export interface DecisionRule {
  id: string;
  /** Name of the policy the rule belongs to. */
  policy: string;
  reason?: string;
  /** Only on `require-approval` decisions, copied from the rule. */
  approval?: ApprovalParams;
}

export interface Decision {
  action: RuleAction;
  /** The rule that decided; absent for the implicit deny. */
  rule?: DecisionRule;
  /** True only for the implicit default-deny (no rule matched). */
  implicit: boolean;
}

/** Condition keys this runtime understands (see header). */
export const KNOWN_CONDITION_KEYS: readonly string[] = ['tool', 'skill', 'path_within'];

// ---------------------------------------------------------------------------------------------
// Composition

/**
 * The ordered policy list for one call: the tool's own policy (by `policy_ref`, already resolved
 * to a name or to the policy itself) first, then the manifest policies in order, skipping the
 * ref'd one. A ref given by name that is not among `manifestPolicies` throws: refs are resolved
 * and checked at load time (crosscheck), so reaching this is a programming error.
 */
export function composeForCall(manifestPolicies: readonly NamedPolicy[], toolPolicyRef?: string | NamedPolicy): NamedPolicy[] {
  if (toolPolicyRef === undefined) return [...manifestPolicies];
  let own: NamedPolicy | undefined;
  if (typeof toolPolicyRef === 'string') {
    own = manifestPolicies.find((p) => p.name === toolPolicyRef);
    if (!own) throw new Error(`policy_ref '${toolPolicyRef}' is not among the manifest policies`);
  } else own = toolPolicyRef;
  return [own, ...manifestPolicies.filter((p) => p.name !== own.name)];
}

// ---------------------------------------------------------------------------------------------
// Evaluation

/** First-match-wins over the concatenated rules; implicit deny when nothing matches (§5.9). */
export function evaluatePolicy(policies: readonly NamedPolicy[], call: PolicyCall): Decision {
  for (const p of policies) {
    for (const rule of p.spec.rules) {
      if (ruleMatches(rule, call)) return decisionFor(rule, p.name);
    }
  }
  return { action: 'deny', implicit: true };
}

function decisionFor(rule: PolicyRule, policy: string): Decision {
  const r: DecisionRule = { id: rule.id, policy };
  if (rule.reason !== undefined) r.reason = rule.reason;
  if (rule.action === 'require-approval' && rule.approval) {
    const a: ApprovalParams = {};
    if (rule.approval.timeout_seconds !== undefined) a.timeout_seconds = rule.approval.timeout_seconds;
    if (rule.approval.default_if_timeout !== undefined) a.default_if_timeout = rule.approval.default_if_timeout;
    r.approval = a;
  }
  return { action: rule.action, rule: r, implicit: false };
}

export function ruleMatches(rule: PolicyRule, call: PolicyCall): boolean {
  switch (rule.scope) {
    case 'all':
    case 'tool':
      break;
    case 'category':
      if (rule.match?.category === undefined) return false;
      break;
    default:
      return false; // unknown scope (schema forbids it): fail closed
  }
  const m = rule.match;
  if (m) {
    if (m.annotations !== undefined) {
      if (!isPlainObject(m.annotations)) return false;
      for (const [k, want] of Object.entries(m.annotations)) {
        if (!Object.prototype.hasOwnProperty.call(call.annotations, k)) return false;
        if (!deepEqual(call.annotations[k], want)) return false;
      }
    }
    if (m.category !== undefined && (call.category === undefined || call.category !== m.category)) return false;
  }
  return conditionsHold(rule.conditions, call);
}

function conditionsHold(conditions: PolicyRule['conditions'], call: PolicyCall): boolean {
  if (conditions === undefined) return true;
  if (!isPlainObject(conditions)) return false;
  for (const [key, value] of Object.entries(conditions)) {
    switch (key) {
      case 'tool': {
        const pats = globList(value);
        if (!pats || !pats.some((p) => matchGlob(p, call.tool))) return false;
        break;
      }
      case 'skill': {
        const pats = globList(value);
        if (!pats || call.skill === undefined) return false;
        const skill = call.skill;
        if (!pats.some((p) => matchGlob(p, skill))) return false;
        break;
      }
      case 'path_within':
        if (typeof value !== 'string' || value === '' || !pathsWithin(call.args, value, call.cwd)) return false;
        break;
      default:
        return false; // unknown condition: fail closed
    }
  }
  return true;
}

function globList(v: unknown): string[] | undefined {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v as string[];
  return undefined;
}

/**
 * Glob match over the whole text: `*` any run (possibly empty), `?` exactly one UTF-16 unit,
 * everything else literal. Iterative with single backtrack point: O(len(p) × len(t)) worst case,
 * no regular expression.
 */
export function matchGlob(pattern: string, text: string): boolean {
  let p = 0;
  let t = 0;
  let star = -1;
  let mark = 0;
  while (t < text.length) {
    if (p < pattern.length && (pattern[p] === '?' || (pattern[p] !== '*' && pattern[p] === text[t]))) {
      p++;
      t++;
    } else if (p < pattern.length && pattern[p] === '*') {
      star = p++;
      mark = t;
    } else if (star !== -1) {
      p = star + 1;
      t = ++mark;
    } else return false;
  }
  while (p < pattern.length && pattern[p] === '*') p++;
  return p === pattern.length;
}

// ---------------------------------------------------------------------------------------------
// path_within

const PATH_KEYS = new Set(['path', 'file', 'filename', 'dir', 'directory', 'cwd']);

/** Whether an argument key names a path (see header). */
export function isPathLikeKey(key: string): boolean {
  const k = key.toLowerCase();
  return PATH_KEYS.has(k) || k.endsWith('_path') || k.endsWith('_dir');
}

/**
 * Lexical POSIX normalization of an absolute path: empty and `.` segments dropped, `..` pops
 * (and stays at `/` at the root). Returns undefined for a relative path or one containing U+0000.
 */
export function normalizePath(p: string): string | undefined {
  if (!p.startsWith('/') || p.includes('\0')) return undefined;
  const out: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') out.pop();
    else out.push(seg);
  }
  return `/${out.join('/')}`;
}

/** `p` resolved against `base` (absolute) when relative, then normalized. */
export function resolvePath(p: string, base?: string): string | undefined {
  if (p.startsWith('/')) return normalizePath(p);
  if (base === undefined || !base.startsWith('/')) return undefined;
  return normalizePath(`${base}/${p}`);
}

/** Lexical containment of normalized absolute paths: `p` is `root` or below it. */
export function isWithin(p: string, root: string): boolean {
  if (root === '/') return true;
  return p === root || p.startsWith(`${root}/`);
}

/** Every path-like argument lies within `dir`, and there is at least one (see header). */
export function pathsWithin(args: unknown, dir: string, cwd?: string): boolean {
  const root = resolvePath(dir, cwd);
  if (root === undefined) return false;
  let seen = 0;
  let ok = true;
  const outcome = walkStrings(args, (s) => {
    if (s.where !== 'value' || s.ownerKey === undefined || !isPathLikeKey(s.ownerKey)) return;
    seen++;
    const p = resolvePath(s.text, cwd);
    if (p === undefined || !isWithin(p, root)) {
      ok = false;
      return false;
    }
  });
  return outcome === 'done' && ok && seen > 0;
}

// ---------------------------------------------------------------------------------------------
// Lint (for the loader)

export interface RuleIssue {
  policy?: string;
  rule: string;
  /** The condition key concerned, when the issue is about `conditions`. */
  key?: string;
  problem: 'unknown-condition' | 'invalid-condition' | 'category-without-match';
  message: string;
}

/** Problems that make a rule match nothing or less than it says; the loader warns on them. */
export function ruleIssues(spec: PolicySpec, policy?: string): RuleIssue[] {
  const out: RuleIssue[] = [];
  const add = (i: Omit<RuleIssue, 'policy'>) => out.push(policy === undefined ? i : { policy, ...i });
  for (const rule of spec.rules) {
    if (rule.scope === 'category' && rule.match?.category === undefined) {
      add({
        rule: rule.id,
        problem: 'category-without-match',
        message: `rule '${rule.id}' has scope: category but no match.category; it never matches`,
      });
    }
    if (!isPlainObject(rule.conditions)) continue;
    for (const [key, value] of Object.entries(rule.conditions)) {
      if (!KNOWN_CONDITION_KEYS.includes(key)) {
        add({
          rule: rule.id,
          key,
          problem: 'unknown-condition',
          message: `rule '${rule.id}': unknown condition '${key}' (known: ${KNOWN_CONDITION_KEYS.join(', ')}); the rule never matches`,
        });
      } else if (key === 'path_within' ? typeof value !== 'string' || value === '' : globList(value) === undefined) {
        add({
          rule: rule.id,
          key,
          problem: 'invalid-condition',
          message: `rule '${rule.id}': condition '${key}' must be ${key === 'path_within' ? 'a non-empty string' : 'a string or a list of strings'}; the rule never matches`,
        });
      }
    }
  }
  return out;
}

/** Unknown condition keys, per rule (subset of ruleIssues()). */
export function unknownConditionKeys(spec: PolicySpec): { rule: string; key: string }[] {
  return ruleIssues(spec)
    .filter((i) => i.problem === 'unknown-condition')
    .map((i) => ({ rule: i.rule, key: i.key! }));
}

// ---------------------------------------------------------------------------------------------

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** JSON deep equality. Recursive, bounded: nesting beyond 64 levels compares unequal. */
export function deepEqual(a: unknown, b: unknown, depth = 0): boolean {
  if (a === b) return true;
  if (depth > 64) return false;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => deepEqual(x, bb[i], depth + 1));
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(rb, k) && deepEqual(ra[k], rb[k], depth + 1));
}
