// CKP wire shapes for tool execution (spec §9.3.2).
import * as v from 'valibot';

export const toolCallParams = v.object({
  name: v.pipe(v.string(), v.minLength(1)),
  // "Tool input matching the tool's input_schema": an object (MCP arguments are always one).
  arguments: v.optional(v.record(v.string(), v.unknown()), {}),
  context: v.object({
    request_id: v.pipe(v.string(), v.minLength(1)),
    identity: v.pipe(v.string(), v.minLength(1)),
    sandbox: v.optional(v.pipe(v.string(), v.minLength(1))),
    policy: v.optional(v.pipe(v.string(), v.minLength(1))),
    /** Extension: the skill a call is made for (policy `conditions.skill`, docs/tools.md). */
    skill: v.optional(v.string()),
  }),
});
export type ToolCallParams = v.InferOutput<typeof toolCallParams>;

export const approvalParams = v.object({
  request_id: v.pipe(v.string(), v.minLength(1)),
  reason: v.optional(v.string()),
});

const isPlainObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
const isNonEmptyString = (x: unknown): x is string => typeof x === 'string' && x.length > 0;
const optional = (x: unknown, ok: (x: unknown) => boolean) => x === undefined || ok(x);
const isString = (x: unknown) => typeof x === 'string';
/** Keys valibot's record() leaves out of its output (prototype pollution guard). */
const hasUnsafeKey = (o: object) => Object.hasOwn(o, '__proto__') || Object.hasOwn(o, 'prototype') || Object.hasOwn(o, 'constructor');

/**
 * `toolCallParams` for the common case, without valibot's per-call allocations: returns what
 * `v.parse(toolCallParams, params)` returns when the params are plainly valid (same keys, same
 * values; the arguments object itself rather than valibot's copy of it), and undefined for
 * anything else — the caller then runs valibot, which gives the exact issues. Proven equal to
 * valibot's output in test/unit/wire-tools.test.ts.
 */
export function fastToolCallParams(params: unknown): ToolCallParams | undefined {
  if (!isPlainObject(params)) return undefined;
  const { name, context } = params;
  let args = params.arguments;
  if (!isNonEmptyString(name) || !isPlainObject(context)) return undefined;
  if (args === undefined) args = {};
  else if (!isPlainObject(args) || hasUnsafeKey(args)) return undefined;
  const { request_id, identity, sandbox, policy, skill } = context;
  if (!isNonEmptyString(request_id) || !isNonEmptyString(identity)) return undefined;
  if (!optional(sandbox, isNonEmptyString) || !optional(policy, isNonEmptyString) || !optional(skill, isString)) return undefined;
  // valibot's object() output has a key for every declared entry present in the input (`in`).
  const ctx: ToolCallParams['context'] = { request_id, identity };
  if ('sandbox' in context) ctx.sandbox = sandbox as string | undefined;
  if ('policy' in context) ctx.policy = policy as string | undefined;
  if ('skill' in context) ctx.skill = skill as string | undefined;
  return { name, arguments: args as Record<string, unknown>, context: ctx };
}
