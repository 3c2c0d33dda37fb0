// Tool arguments validated against the tool's input_schema as real JSON Schema (draft 2020-12),
// spec §5.4: "The runtime MUST validate tool call arguments against it before execution".
// valibot cannot interpret arbitrary JSON Schema at run time; @cfworker/json-schema can, in ~23 KB.
import { Validator } from '@cfworker/json-schema';

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
  return (args) => {
    const r = v.validate(args);
    if (r.valid) return [];
    return r.errors
      .filter((e) => e.keyword !== 'false') // the echo of an additionalProperties failure, said once already
      .map((e) => ({ path: e.instanceLocation.replace(/^#/, ''), keyword: e.keyword, message: e.error }));
  };
}
