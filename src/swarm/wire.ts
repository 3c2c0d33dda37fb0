// Wire shapes of spec §9.3.3 swarm methods, plus claw-edge's extensions (docs/swarm.md):
//   `from`               the sending agent's identity on peer-to-peer messages (self-declared:
//                        used to route the report back, checked against the swarm's members)
//   task.input.tool      what a peer runs for a task until the agent loop exists:
//                        { name, arguments } → its own claw.tool.call, through its own gates
//   claw.swarm.result    { task_id, wait_ms? } → the task's record (status, result, reports)
import * as v from 'valibot';
import { jsonObject } from '../protocol/json-object.ts';

const id = v.pipe(v.string(), v.minLength(1), v.maxLength(256));

export const delegateParams = v.object({
  task_id: id,
  task: v.object({
    description: v.string(),
    input: v.optional(jsonObject),
  }),
  context: v.object({ request_id: id, swarm: id }),
  from: v.optional(id),
});
export type DelegateParams = v.InferOutput<typeof delegateParams>;

export const REPORT_STATUSES = ['completed', 'failed', 'partial'] as const;
export const reportParams = v.object({
  task_id: id,
  status: v.picklist(REPORT_STATUSES),
  result: v.unknown(),
  token_usage: v.optional(v.pipe(v.number(), v.minValue(0))),
  duration_ms: v.optional(v.pipe(v.number(), v.minValue(0))),
  from: v.optional(id),
});
export type ReportParams = v.InferOutput<typeof reportParams>;

export const broadcastParams = v.object({ swarm: id, message: v.unknown(), from: v.optional(id) });
export const discoverParams = v.optional(v.object({ swarm: v.optional(id) }), {});
export const resultParams = v.object({ task_id: id, wait_ms: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(600_000))) });

/** The one kind of task a peer can run before the agent loop: a tool call. */
export const toolTask = v.object({
  name: v.pipe(v.string(), v.minLength(1)),
  arguments: v.optional(jsonObject, {}),
});
