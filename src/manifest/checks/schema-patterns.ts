// The regular expressions of a JSON Schema (`pattern`, `patternProperties` keys) that the linear-time engine
// cannot run, for `claw validate` (./tools.ts). Apart from src/tools/json-schema.ts so the manifest
// checks do not pull the JSON Schema validator into the bundle's hot code.
import { linearRegexProblem } from '../../regex/linear-regex.ts';

export interface PatternIssue {
  /** Path segments inside the schema, e.g. ['properties', 'id', 'pattern']. */
  path: (string | number)[];
  message: string;
}

/** Keywords whose values are data, not schemas: a `pattern` key inside them is not a regular expression. */
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples']);

/** Every `pattern` / `patternProperties` key of a schema the linear engine cannot run (for `claw validate`). */
export function schemaPatternIssues(schema: unknown, path: (string | number)[] = [], depth = 0, out: PatternIssue[] = []): PatternIssue[] {
  if (depth > 64 || typeof schema !== 'object' || schema === null) return out;
  if (Array.isArray(schema)) {
    schema.forEach((x, i) => schemaPatternIssues(x, [...path, i], depth + 1, out));
    return out;
  }
  const s = schema as Record<string, unknown>;
  if (typeof s.pattern === 'string') {
    const p = linearRegexProblem(s.pattern, 'u');
    if (p) out.push({ path: [...path, 'pattern'], message: `pattern cannot be used (patterns run in linear time, docs/tools.md): ${p}` });
  }
  for (const [k, v] of Object.entries(s)) {
    if (DATA_KEYWORDS.has(k)) continue;
    if (k === 'patternProperties' && typeof v === 'object' && v !== null) {
      for (const key of Object.keys(v)) {
        const p = linearRegexProblem(key, 'u');
        if (p) out.push({ path: [...path, k, key], message: `patternProperties key cannot be used (patterns run in linear time, docs/tools.md): ${p}` });
      }
    }
    if (k !== 'pattern') schemaPatternIssues(v, [...path, k], depth + 1, out);
  }
  return out;
}
