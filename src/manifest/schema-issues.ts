// valibot issues → RawIssue, with the path prefixed to where the checked value sits in its file.
import * as v from 'valibot';
import type { PathSegment, RawIssue } from './issues.ts';

type AnyIssue = v.BaseIssue<unknown>;

function issuePath(issue: AnyIssue): PathSegment[] {
  return (issue.path ?? []).map((p) => p.key as PathSegment);
}

/** A readable message from a valibot issue: unknown keys and missing keys get plain words. */
function describe(issue: AnyIssue): string {
  const path = issue.path ?? [];
  const last = path[path.length - 1];
  if (issue.kind === 'schema' && issue.expected === 'never' && last) return `unknown field "${String(last.key)}"`;
  if (issue.kind === 'schema' && issue.received === 'undefined' && last) return `missing required field "${String(last.key)}"`;
  if (issue.type === 'union' && issue.issues?.length) {
    const inner = issue.issues.map((i) => describe(i)).filter((m, i, a) => a.indexOf(m) === i);
    return `matches none of the allowed forms (${inner.slice(0, 3).join('; ')})`;
  }
  return issue.message;
}

export function schemaIssues(
  schema: v.GenericSchema,
  value: unknown,
  where: { file: string; prefix: PathSegment[]; section?: string },
): RawIssue[] {
  const r = v.safeParse(schema, value, { abortEarly: false });
  if (r.success) return [];
  return r.issues.map((issue) => ({
    file: where.file,
    segments: [...where.prefix, ...issuePath(issue)],
    message: describe(issue),
    section: where.section,
    rule: 'schema',
  }));
}
