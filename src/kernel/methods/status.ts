// claw.status (spec §9.3.1): the lifecycle state and milliseconds since initialization completed.
// Answered in every state once a session has begun, so an operator can watch STOPPING and STOPPED.
import * as v from 'valibot';
import { ErrorCode, ProtocolError } from '../../protocol/errors.ts';
import { issuesData, statusParams } from '../../protocol/wire.ts';
import type { MethodSpec } from './index.ts';

export const status: MethodSpec = {
  level: 1,
  states: ['STARTING', 'READY', 'STOPPING', 'STOPPED', 'ERROR'],
  handler(params, _ctx, agent) {
    // Absent params (the usual poll) need no schema run: statusParams accepts undefined as it is.
    if (params !== undefined) {
      const p = v.safeParse(statusParams, params);
      if (!p.success) throw new ProtocolError(ErrorCode.InvalidParams, 'Invalid params for claw.status', issuesData(p.issues));
    }
    return agent.snapshot();
  },
};
