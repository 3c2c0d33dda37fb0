// claw.initialized (spec §9.3.1): the operator has processed our capabilities. A notification:
// nothing to answer; we note it in the log.
import type { MethodSpec } from './index.ts';

export const initialized: MethodSpec = {
  level: 1,
  states: ['READY'],
  handler(_params, ctx, agent) {
    agent.opts.log.debug('operator confirmed initialization', { transport: ctx.transport });
    return null;
  },
};
