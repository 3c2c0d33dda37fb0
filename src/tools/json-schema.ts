// Tool arguments validated against the tool's input_schema as real JSON Schema (draft 2020-12),
// spec §5.4: "The runtime MUST validate tool call arguments against it before execution".
// valibot cannot interpret arbitrary JSON Schema at run time; @cfworker/json-schema can, in ~23 KB.
import { Validator } from '@cfworker/json-schema';
import { compileFastAccept } from './json-schema-fast.ts';

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
  // Plainly valid arguments of a plain schema skip the full validator (json-schema-fast.ts).
  const accept = compileFastAccept(schema);
  return (args) => {
    if (accept?.(args)) return [];
    const r = v.validate(args);
    if (r.valid) return [];
    return r.errors
      .filter((e) => e.keyword !== 'false') // the echo of an additionalProperties failure, said once already
      .map((e) => ({ path: e.instanceLocation.replace(/^#/, ''), keyword: e.keyword, message: e.error }));
  };
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
