// claw.shutdown (spec §9.3.1, §8 STOPPING): drain in-flight work up to timeout_ms and say honestly
// whether everything finished (`drained`). Work still running at the deadline is cancelled.
import * as v from 'valibot';
import { ErrorCode, ProtocolError } from '../../protocol/errors.ts';
import { issuesData, shutdownParams } from '../../protocol/wire.ts';
import { DEFAULT_SHUTDOWN_TIMEOUT_MS } from '../agent-core.ts';
import type { MethodSpec } from './index.ts';

export const shutdown: MethodSpec = {
  level: 1,
  states: ['READY', 'ERROR', 'STOPPING', 'STOPPED'],
  async handler(params, ctx, agent) {
    const p = v.safeParse(shutdownParams, params);
    if (!p.success) throw new ProtocolError(ErrorCode.InvalidParams, 'Invalid params for claw.shutdown', issuesData(p.issues));
    if (agent.lifecycle.state === 'STOPPED') return { drained: true };
    const timeout = p.output?.timeout_ms ?? agent.opts.config.shutdown?.timeout_ms ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
    agent.opts.log.info('shutdown requested', { reason: p.output?.reason, timeout_ms: timeout });
    // Drain what arrived before this request; the shutdown itself and anything after it are not waited for.
    const drained = await agent.stopSession(timeout, ctx.token);
    return { drained };
  },
};
