// Tool arguments validated against the tool's input_schema as real JSON Schema (draft 2020-12),
// spec §5.4: "The runtime MUST validate tool call arguments against it before execution".
// valibot cannot interpret arbitrary JSON Schema at run time; @cfworker/json-schema can, in ~23 KB.
//
// `pattern` and `patternProperties` are regular expressions written by whoever wrote the schema (a manifest, an
// MCP server): they run in the linear-time engine (src/regex/linear-regex.ts), never the host's backtracking
// one, where `^(a+)+$` against a long argument stalls the whole runtime. The validator builds them with
// `new RegExp(p, 'u')`; while it validates (synchronously, so nothing else runs meanwhile) that global
// constructor is the linear engine's. schemaProblem refuses a pattern the engine cannot run (backreferences,
// lookaround), so a tool with one fails at binding, naming the schema path; one arriving later fails closed.
import { Validator } from '@cfworker/json-schema';
import { compileLinear, linearRegexProblem } from '../regex/linear-regex.ts';

export interface ArgumentIssue {
  /** JSON pointer of the failing value, e.g. `/text` (`` for the arguments object itself). */
  path: string;
  keyword: string;
  message: string;
}

export type ArgumentCheck = (args: unknown) => ArgumentIssue[];

/** Compile once per tool; the returned check lists every failing path (not just the first). */
export function compileArgumentSchema(schema: Record<string, unknown>): ArgumentCheck {
  const v = new Validator(schema as any, '2020-12', false);
  const regexes = usesRegex(schema);
  return (args) => {
    let r: ReturnType<Validator['validate']>;
    try {
      r = regexes ? withLinearRegExp(() => v.validate(args)) : v.validate(args);
    } catch (e) {
      if (!regexes) throw e;
      return [{ path: '', keyword: 'pattern', message: `a pattern of the schema cannot be checked: ${(e as Error).message}` }];
    }
    if (r.valid) return [];
    return r.errors
      .filter((e) => e.keyword !== 'false') // the echo of an additionalProperties failure, said once already
      .map((e) => ({ path: e.instanceLocation.replace(/^#/, ''), keyword: e.keyword, message: e.error }));
  };
}

/** Stand-in for the global RegExp while the validator runs: `new RegExp(p, f)` answers with the linear engine. */
function LinearRegExp(source: unknown, flags?: unknown) {
  return compileLinear(String(source), flags === undefined ? '' : String(flags));
}

function withLinearRegExp<T>(fn: () => T): T {
  const host = globalThis.RegExp;
  globalThis.RegExp = LinearRegExp as unknown as RegExpConstructor;
  try {
    return fn();
  } finally {
    globalThis.RegExp = host;
  }
}

/** Whether the schema text holds a keyword that makes the validator build a regular expression. */
function usesRegex(schema: unknown): boolean {
  const text = JSON.stringify(schema) ?? '';
  return text.includes('"pattern"') || text.includes('"patternProperties"') || text.includes('"regex"');
}

const TYPES = new Set(['null', 'boolean', 'object', 'array', 'number', 'integer', 'string']);
const SUBSCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];
const SUBSCHEMAS = ['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'unevaluatedItems', 'unevaluatedProperties'];
const SUBSCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];

/**
 * Spec §5.4: "input_schema MUST be a valid JSON Schema object". The validator does not check the
 * schema itself, so the keywords whose misuse would reject (or crash) every call are checked here:
 * type names, `required` lists, and the shapes of subschema containers. Returns the first problem.
 */
export function schemaProblem(schema: unknown, path = '#', depth = 0): string | undefined {
  if (typeof schema === 'boolean') return undefined;
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return `${path} is not a schema (object or boolean)`;
  if (depth > 64) return `${path} nests too deeply`;
  const s = schema as Record<string, unknown>;
  if ('type' in s) {
    const t = s.type;
    const ok = typeof t === 'string' ? TYPES.has(t) : Array.isArray(t) && t.length > 0 && t.every((x) => typeof x === 'string' && TYPES.has(x));
    if (!ok) return `${path}/type must be one of ${[...TYPES].join(', ')} (or a list of them)`;
  }
  if ('required' in s && !(Array.isArray(s.required) && s.required.every((x) => typeof x === 'string'))) return `${path}/required must be a list of property names`;
  if ('enum' in s && !Array.isArray(s.enum)) return `${path}/enum must be a list`;
  if ('pattern' in s) {
    if (typeof s.pattern !== 'string') return `${path}/pattern must be a string`;
    const p = linearRegexProblem(s.pattern, 'u');
    if (p) return `${path}/pattern cannot be used (patterns run in linear time, docs/tools.md): ${p}`;
  }
  if (typeof s.patternProperties === 'object' && s.patternProperties !== null) {
    for (const key of Object.keys(s.patternProperties)) {
      const p = linearRegexProblem(key, 'u');
      if (p) return `${path}/patternProperties key cannot be used (patterns run in linear time, docs/tools.md): ${p}`;
    }
  }
  for (const k of SUBSCHEMA_MAPS) {
    const m = s[k];
    if (m === undefined) continue;
    if (typeof m !== 'object' || m === null || Array.isArray(m)) return `${path}/${k} must be an object of schemas`;
    for (const [name, sub] of Object.entries(m)) {
      const p = schemaProblem(sub, `${path}/${k}/${name}`, depth + 1);
      if (p) return p;
    }
  }
  for (const k of SUBSCHEMAS) {
    if (s[k] === undefined) continue;
    const p = schemaProblem(s[k], `${path}/${k}`, depth + 1);
    if (p) return p;
  }
  for (const k of SUBSCHEMA_LISTS) {
    const l = s[k];
    if (l === undefined) continue;
    if (!Array.isArray(l)) return `${path}/${k} must be a list of schemas`;
    for (let i = 0; i < l.length; i++) {
      const p = schemaProblem(l[i], `${path}/${k}/${i}`, depth + 1);
      if (p) return p;
    }
  }
  return undefined;
}
