// A shortcut for the input_schemas most tools declare: an object with typed properties and a
// `required` list. For such a schema, compileFastAccept returns a check that says "valid" without
// @cfworker/json-schema's per-call allocations (it was ~7% of a pipelined echo call's CPU, BENCH.md);
// whenever it cannot say "valid", the full validator runs and gives the exact issues. For any other
// schema it returns undefined. Proven against the full validator in test/unit/json-schema-fast.test.ts.

/** Keywords that only annotate (JSON Schema 2020-12 meta-data vocabulary): no effect on validity. */
const ANNOTATIONS = new Set(['title', 'description', 'default', 'examples', '$comment', 'deprecated', 'readOnly', 'writeOnly']);
const SIMPLE_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null', 'object', 'array']);

type TypeCheck = (v: unknown) => boolean;

const TYPE_CHECKS: Record<string, TypeCheck> = {
  string: (v) => typeof v === 'string',
  number: (v) => typeof v === 'number' && Number.isFinite(v),
  integer: (v) => typeof v === 'number' && Number.isInteger(v),
  boolean: (v) => typeof v === 'boolean',
  null: (v) => v === null,
  object: (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
  array: (v) => Array.isArray(v),
};

/** `{ type: <one simple type>, ...annotations }` or `{ ...annotations }` (anything) → its check. */
function propertyCheck(schema: unknown): TypeCheck | undefined {
  if (schema === true) return () => true;
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return undefined;
  let check: TypeCheck = () => true;
  for (const [k, v] of Object.entries(schema)) {
    if (ANNOTATIONS.has(k)) continue;
    if (k === 'type' && typeof v === 'string' && SIMPLE_TYPES.has(v)) check = TYPE_CHECKS[v]!;
    else return undefined;
  }
  return check;
}

/**
 * For `{ type: "object", properties: { name: { type } … }, required: [...], additionalProperties: boolean }`
 * (every part optional except type, plus annotations), a check that returns true only for arguments
 * the full validator accepts. undefined for any other schema.
 */
export function compileFastAccept(schema: Record<string, unknown>): ((args: unknown) => boolean) | undefined {
  if (schema.type !== 'object') return undefined;
  const props: [string, TypeCheck][] = [];
  let required: string[] = [];
  let closed = false;
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'type' || ANNOTATIONS.has(k)) continue;
    if (k === 'properties') {
      if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
      for (const [name, sub] of Object.entries(v)) {
        const c = propertyCheck(sub);
        if (!c) return undefined;
        props.push([name, c]);
      }
    } else if (k === 'required') {
      if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) return undefined;
      required = v as string[];
    } else if (k === 'additionalProperties' && typeof v === 'boolean') {
      closed = !v;
    } else return undefined;
  }
  const known = new Set(props.map(([n]) => n));
  return (args) => {
    if (typeof args !== 'object' || args === null || Array.isArray(args)) return false;
    const o = args as Record<string, unknown>;
    for (const r of required) if (!Object.hasOwn(o, r)) return false;
    for (const [name, check] of props) if (Object.hasOwn(o, name) && !check(o[name])) return false;
    if (closed) for (const k in o) if (!known.has(k)) return false;
    return true;
  };
}
