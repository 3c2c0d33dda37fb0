// CKP wire shapes for tool execution (spec §9.3.2).
import * as v from 'valibot';
import { jsonObject } from './json-object.ts';

export const toolCallParams = v.object({
  name: v.pipe(v.string(), v.minLength(1)),
  // "Tool input matching the tool's input_schema": an object (MCP arguments are always one).
  arguments: v.optional(jsonObject, {}),
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
