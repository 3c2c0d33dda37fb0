// The method table entry shape and the Level 1 methods every agent has (spec §11).
import type { LifecycleState } from '../lifecycle.ts';
import type { CallContext } from '../router.ts';
import type { AgentCore } from '../agent-core.ts';
import { initialize } from './initialize.ts';
import { initialized } from './initialized.ts';
import { status } from './status.ts';
import { shutdown } from './shutdown.ts';

export interface MethodSpec {
  /** Lowest conformance level whose agents answer this method (spec §11 method table). */
  level: 1 | 2 | 3;
  /** Lifecycle states in which the method is accepted. */
  states: readonly LifecycleState[];
  /** Checks of the request itself that come before the state check (throws the ProtocolError to answer). */
  checkRequest?(params: unknown): void;
  handler(params: unknown, ctx: CallContext, agent: AgentCore): Promise<unknown> | unknown;
}

export const CORE_METHODS: Record<string, MethodSpec> = {
  'claw.initialize': initialize,
  'claw.initialized': initialized,
  'claw.status': status,
  'claw.shutdown': shutdown,
};
