// The FemtoClaw protocol validator (FemtoClaw §9–§10): a pure, deterministic function of
// (raw output, capability registry, limits). Steps run in the seed's order and the first failing
// one decides the verdict:
//   1 parse       strict JSON (src/protocol/strict-json.ts)
//   2 structure   a JSON object with exactly one top-level field, `message` or `tool_call` (§4)
//   3 form        the form's own fields, exactly, with their JSON types (§5.2, §6.2)
//   4 capability  the tool name: grammar, then an exact, case-sensitive registry match (§7)
//   5 arguments   `args` against the tool's JSON Schema (§8)
// Nothing is repaired: no trimming, case folding or Unicode normalization of names, no unwrapping
// of code fences, no re-parsing of strings as JSON. Decisions where the seed is open are in
// docs/femtoclaw.md and each has a test.
import { parseStrictJson, DEFAULT_JSON_LIMITS, type StrictJsonLimits } from '../protocol/strict-json.ts';
import type { ArgumentCheck, ArgumentIssue } from '../tools/json-schema.ts';
import type { Rejection, RejectReason, ValidationStep, Verdict } from './verdict.ts';

/** Registered capabilities: name → the compiled argument check of its input_schema. */
export type CapabilityRegistry = ReadonlyMap<string, ArgumentCheck>;

export interface ValidationLimits extends StrictJsonLimits {
  /** Argument issues kept in a verdict (the rest are counted in `detail`). */
  maxIssues: number;
}

export const DEFAULT_VALIDATION_LIMITS: ValidationLimits = { ...DEFAULT_JSON_LIMITS, maxIssues: 8 };

/**
 * Tool names the protocol accepts: the manifest's own name grammar (metadata.name: 1–63 of
 * [A-Za-z0-9-], starting alphanumeric) widened by `_` and `.`, which MCP servers use. ASCII only,
 * so no two different names can look or normalize alike.
 */
export const TOOL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

const hasOwn = Object.prototype.hasOwnProperty;

export function validateOutput(raw: string | Uint8Array, registry: CapabilityRegistry, limits: Partial<ValidationLimits> = {}): Verdict {
  // Step 1: parse.
  const parsed = parseStrictJson(raw, limits);
  if (!parsed.ok) {
    let reason: RejectReason = parsed.code;
    let detail = parsed.message;
    if (parsed.code === 'syntax' || parsed.code === 'trailing_data') {
      const text = typeof raw === 'string' ? raw : '';
      const lead = typeof raw === 'string' ? firstNonWs(text) : firstNonWsByte(raw);
      if (lead === '`') {
        reason = 'code_fence';
        detail = 'the output starts with a code fence; fences are rejected, not unwrapped';
      } else if (parsed.code === 'syntax' && lead !== '' && !'{["-0123456789tfn'.includes(lead)) {
        reason = 'text_around_json';
        detail = 'the output starts with text, not a JSON object';
      }
    }
    return reject('parse', reason, detail, { pos: parsed.pos });
  }
  const v = parsed.value;

  // Step 2: top-level structure.
  if (!isObject(v)) return reject('structure', 'not_object', 'a protocol message is a JSON object');
  let count = 0;
  for (const k in v) {
    if (!hasOwn.call(v, k)) continue;
    count++;
    if (k !== 'message' && k !== 'tool_call') return reject('structure', 'unknown_field', `unknown top-level field "${clip(k)}"`, { field: pointer('', k) });
  }
  if (count === 0) return reject('structure', 'no_form', 'neither "message" nor "tool_call" is present');
  if (count === 2) return reject('structure', 'both_forms', 'both "message" and "tool_call" are present; exactly one is allowed');

  // Step 3: form.
  if (hasOwn.call(v, 'message')) {
    const m = v.message;
    if (!isObject(m)) return reject('form', 'form_not_object', '"message" must be an object', { form: 'message', field: '/message' });
    const extra = unknownKey(m, 'content');
    if (extra !== undefined) return reject('form', 'unknown_field', `unknown field "${clip(extra)}" in "message"`, { form: 'message', field: pointer('/message', extra) });
    if (!hasOwn.call(m, 'content')) return reject('form', 'missing_field', '"message" needs "content"', { form: 'message', field: '/message/content' });
    if (typeof m.content !== 'string') return reject('form', 'wrong_type', '"content" must be a string', { form: 'message', field: '/message/content' });
    // Decision (docs/femtoclaw.md): a message with nothing to read is a failed turn, not an answer.
    if (m.content.trim() === '') return reject('form', 'empty_content', '"content" is empty', { form: 'message', field: '/message/content' });
    return { valid: true, form: 'message', content: m.content };
  }
  const t = v.tool_call;
  if (!isObject(t)) return reject('form', 'form_not_object', '"tool_call" must be an object', { form: 'tool_call', field: '/tool_call' });
  let extra: string | undefined;
  for (const k in t) if (hasOwn.call(t, k) && k !== 'tool' && k !== 'args') extra ??= k;
  if (extra !== undefined) return reject('form', 'unknown_field', `unknown field "${clip(extra)}" in "tool_call"`, { form: 'tool_call', field: pointer('/tool_call', extra) });
  if (!hasOwn.call(t, 'tool')) return reject('form', 'missing_field', '"tool_call" needs "tool"', { form: 'tool_call', field: '/tool_call/tool' });
  if (typeof t.tool !== 'string') return reject('form', 'wrong_type', '"tool" must be a string', { form: 'tool_call', field: '/tool_call/tool' });
  const tool = t.tool;
  // Decision: `args` is required (§6.2 shows it; §8 "MUST be valid JSON object"); `{}` for none.
  if (!hasOwn.call(t, 'args')) return reject('form', 'missing_field', '"tool_call" needs "args" (an object; {} when there are none)', { form: 'tool_call', tool, field: '/tool_call/args' });
  // A string holding JSON is a string: never re-parsed (§8: `args` is a JSON object, not text that holds one).
  if (!isObject(t.args)) return reject('form', 'wrong_type', '"args" must be a JSON object', { form: 'tool_call', tool, field: '/tool_call/args' });
  const args = t.args;

  // Step 4: capability identifier — exact bytes, no trimming, folding or normalization (§7).
  if (!TOOL_NAME.test(tool)) return reject('capability', 'invalid_tool_name', 'the tool name is not a valid capability identifier', { form: 'tool_call', tool });
  const check = registry.get(tool);
  if (check === undefined) return reject('capability', 'unknown_tool', `no registered tool is named "${tool}"`, { form: 'tool_call', tool });

  // Step 5: arguments against the tool's JSON Schema.
  const issues = check(args);
  if (issues.length > 0) {
    const max = limits.maxIssues ?? DEFAULT_VALIDATION_LIMITS.maxIssues;
    const kept = leafIssues(issues).slice(0, max);
    const more = issues.length - kept.length;
    return reject('arguments', 'args_schema', `arguments do not match the input_schema of "${tool}"${more > 0 ? ` (${more} more issues)` : ''}`, {
      form: 'tool_call',
      tool,
      issues: kept,
    });
  }
  return { valid: true, form: 'tool_call', tool, args };
}

function reject(step: ValidationStep, reason: RejectReason, detail: string, extra: Omit<Rejection, 'valid' | 'step' | 'reason' | 'detail'> = {}): Rejection {
  return { valid: false, step, reason, detail, ...extra };
}

function isObject(x: unknown): x is Record<string, any> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function unknownKey(o: Record<string, unknown>, allowed: string): string | undefined {
  for (const k in o) if (hasOwn.call(o, k) && k !== allowed) return k;
  return undefined;
}

/** Field names come from the model: bounded, so a verdict (and what logs it) stays small. */
function clip(s: string): string {
  return s.length > 64 ? `${s.slice(0, 64)}…` : s;
}

function pointer(base: string, key: string): string {
  return `${base}/${clip(key).replace(/~/g, '~0').replace(/\//g, '~1')}`;
}

/** The wrappers (`properties`, `items`, ...) only repeat what the leaf issues say. */
function leafIssues(issues: ArgumentIssue[]): ArgumentIssue[] {
  const leaves = issues.filter((i) => !WRAPPERS.has(i.keyword));
  return (leaves.length > 0 ? leaves : issues).map((i) => ({ path: clip(i.path), keyword: i.keyword, message: i.message.length > 160 ? `${i.message.slice(0, 160)}…` : i.message }));
}
const WRAPPERS = new Set(['properties', 'items', 'prefixItems', 'allOf', 'patternProperties', '$ref']);

function firstNonWs(s: string): string {
  const m = /[^ \t\r\n]/.exec(s);
  return m ? m[0] : '';
}

function firstNonWsByte(b: Uint8Array): string {
  for (const c of b) if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return String.fromCharCode(c);
  return '';
}
