// What a peer "works on" before the agent loop exists (docs/swarm.md): a task names one tool call
// in task.input.tool = { name, arguments }. The peer runs it as its own claw.tool.call, through
// the kernel's dispatch, so the schema, autonomy, policy, approval, quota and sandbox gates of
// this agent apply (a peer's message is untrusted input, spec §10). The call's request_id is
// `peer:{sender}:{delegation request_id}`: a redelivered task hits the tool dedup cache, not the
// tool, and a peer never shares the operator's request_id space.
import * as v from 'valibot';
import { ErrorCode, ProtocolError } from '../protocol/errors.ts';
import type { TaskRunner } from './peer.ts';
import { toolTask } from './wire.ts';

export type Dispatch = (method: string, params: unknown) => Promise<unknown>;

export function toolTaskRunner(dispatch: Dispatch, identity: () => string): TaskRunner {
  return {
    async run(task, ctx) {
      const t = v.safeParse(toolTask, task.input?.tool);
      if (!t.success) {
        return {
          status: 'failed',
          result: { error: { code: ErrorCode.InvalidParams, message: 'Invalid params: this agent runs a delegated task as a tool call: task.input.tool = { name, arguments }' } },
        };
      }
      try {
        const out: any = await dispatch('claw.tool.call', {
          name: t.output.name,
          arguments: t.output.arguments,
          // The peer's own identity: a sender cannot pick whose autonomy or policy applies.
          // Namespaced by sender: a peer cannot collide with (or replay) the operator's request_ids.
          context: { request_id: `peer:${ctx.from}:${ctx.request_id}`, identity: identity() },
        });
        return { status: out?.isError === true ? 'failed' : 'completed', result: out };
      } catch (e) {
        const error = e instanceof ProtocolError ? e.toJSON() : { code: ErrorCode.InternalError, message: 'Internal error' };
        return { status: 'failed', result: { error } };
      }
    },
  };
}
