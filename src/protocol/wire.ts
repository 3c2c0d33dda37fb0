// CKP wire shapes for the agent-management methods (spec §9.3.1), as valibot schemas.
import * as v from 'valibot';
import { isVersion } from './semver.ts';

const semver = v.pipe(v.string(), v.check((s: string) => isVersion(s), 'must be a semantic version like "0.3.0"'));

export const initializeParams = v.object({
  protocolVersion: semver,
  clientInfo: v.object({ name: v.string(), version: v.string() }),
  manifest: v.union([v.record(v.string(), v.unknown()), v.pipe(v.string(), v.startsWith('claw://', 'must be an inline manifest object or a claw:// URI'))]),
  capabilities: v.record(v.string(), v.unknown()),
});
export type InitializeParams = v.InferOutput<typeof initializeParams>;

export const shutdownParams = v.optional(
  v.object({
    reason: v.optional(v.string()),
    timeout_ms: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  }),
);

export const statusParams = v.optional(v.union([v.object({}), v.array(v.unknown()), v.null()]));

/** valibot issues as JSON-RPC error data: path and message for each. */
export function issuesData(issues: readonly v.BaseIssue<unknown>[]): { issues: { path: string; message: string }[] } {
  return {
    issues: issues.map((i) => ({
      path: (i.path ?? []).map((p) => String(p.key)).join('.') || '(params)',
      message: i.message,
    })),
  };
}
