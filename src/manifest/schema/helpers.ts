// Building blocks that map JSON Schema keywords onto valibot, shared by every CKP schema file.
//
//   type: object + additionalProperties: false   → strict({...})
//   type: object (additionalProperties absent/true) → loose({...})
//   type: object (nothing else)                   → anyObject
//   additionalProperties: { type: string }        → stringMap
//   if: ... then: { required: [...] }             → requiring(schema, [[key, when, message], ...])
//
// Valibot's object and record schemas accept arrays (they only test `typeof === 'object'`), while
// JSON Schema's `type: object` does not, so every object schema is gated by `anyObject` first.
import * as v from 'valibot';

/** JSON Schema `type: object`: a non-null, non-array object. */
export const isPlainObject = (input: unknown): input is Record<string, unknown> =>
  typeof input === 'object' && input !== null && !Array.isArray(input);

// The shared schemas below are lazySchema values too (built the first time anything reads them): the config
// modules import this file at start-up for lazySchema itself, and a warm start validates nothing (docs/startup.md).

/** `{ type: object }` with no further constraint (input_schema, hints, annotations, ...). */
export const anyObject = lazySchema(() =>
  v.custom<Record<string, unknown>>(isPlainObject, (issue) => `Invalid type: Expected Object but received ${issue.received}`),
);

// Object schemas only raise key issues once `anyObject` has vetted the type: the default
// "Expected never" for an unknown key is unclear, so name what happened.
const keyMessage = (issue: v.BaseIssue<unknown>): string =>
  issue.expected === 'never' ? `unknown field ${issue.received}` : `missing required field ${issue.expected}`;

/** `type: object` + `additionalProperties: false`. */
export const strict = <E extends v.ObjectEntries>(entries: E) =>
  v.pipe(realSchema(anyObject), v.strictObject(entries, keyMessage));

/** `type: object` without `additionalProperties` (or `true`): unknown keys are kept. */
export const loose = <E extends v.ObjectEntries>(entries: E) =>
  v.pipe(realSchema(anyObject), v.looseObject(entries, keyMessage));

/** `type: object` + `additionalProperties: { type: string }`. */
export const stringMap = lazySchema(() => v.pipe(realSchema(anyObject), v.record(v.string(), v.string())));

export const str = lazySchema(() => v.string());
export const bool = lazySchema(() => v.boolean());
export const strList = lazySchema(() => v.array(realSchema(str)));

/** `type: string` + `minLength: 1`. (JSON Schema counts code points, valibot UTF-16 units: same for 1.) */
export const nonEmpty = lazySchema(() => v.pipe(v.string(), v.minLength(1, 'must not be empty')));

/** `type: integer` + `minimum`. */
export const int = (min: number) => v.pipe(v.number(), v.integer(), v.minValue(min));
export const int0 = lazySchema(() => int(0));
export const int1 = lazySchema(() => int(1));

/** `type: number` + `minimum: 0`. */
export const num0 = lazySchema(() => v.pipe(v.number(), v.minValue(0)));
/** `type: number` + `minimum: 0` + `maximum: 1`. */
export const unit = lazySchema(() => v.pipe(v.number(), v.minValue(0), v.maxValue(1)));

/** `type: array` + `minItems: 1`. */
export const nonEmptyArray = <S extends v.GenericSchema>(item: S) =>
  v.pipe(v.array(item), v.minLength(1, 'must have at least one entry'));

/**
 * `format: uri`, checked permissively: a scheme (RFC 3986 §3.1) followed by at least one
 * non-space character. Stricter URI grammar is the transport's job when it connects.
 */
export const uri = lazySchema(() =>
  v.pipe(v.string(), v.regex(/^[a-zA-Z][a-zA-Z0-9+.-]*:\S+$/, 'must be an absolute URI with a scheme, e.g. "https://host/v1"')),
);

/** One `if: <when> then: { required: [key] }` clause. */
export type RequiredWhen = readonly [key: string, when: (input: Record<string, unknown>) => boolean, message: string];

/**
 * Adds `if/then` required clauses to an object schema. Each issue's path points at the missing
 * key (e.g. `spec.description`), not at the enclosing object. The check runs even when sibling
 * fields have issues (like valibot's partialCheck), so one pass reports every problem.
 */
export const requiring = <S extends v.GenericSchema>(schema: S, clauses: readonly RequiredWhen[]) =>
  v.pipe(
    schema,
    v.rawCheck<v.InferOutput<S>>(({ dataset, addIssue }) => {
      const input: unknown = dataset.value;
      if (!isPlainObject(input)) return;
      for (const [key, when, message] of clauses) {
        if (input[key] === undefined && when(input)) {
          addIssue({ message, path: [{ type: 'object', origin: 'key', input, key, value: undefined }] });
        }
      }
    }),
  );

const REAL = Symbol('claw.lazySchema');

/**
 * A schema built the first time anything reads it (docs/startup.md: building every primitive's schema at
 * import cost each start ~560 valibot constructions, most for primitives its manifest does not have). The
 * value stands in for the schema everywhere (a Proxy forwarding every read), so importers and valibot use it
 * as they would the schema itself; specSchema() hands out the real object (realSchema) to skip the Proxy.
 */
export function lazySchema<S extends object>(build: () => S): S {
  let real: S | undefined;
  const get = (): S => (real ??= build());
  return new Proxy({} as S, {
    get: (_t, k) => (k === REAL ? get() : Reflect.get(get(), k)),
    has: (_t, k) => Reflect.has(get(), k),
    ownKeys: () => Reflect.ownKeys(get()),
    getOwnPropertyDescriptor: (_t, k) => Reflect.getOwnPropertyDescriptor(get(), k),
  });
}

/** The schema behind a lazySchema (built now if it was not), or the argument itself. */
export const realSchema = <S extends object>(s: S): S => ((s as Record<symbol, S | undefined>)[REAL] ?? s);
