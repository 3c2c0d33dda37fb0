// The Level 1 methods every agent has (spec §11).
import type { MethodSpec } from '../agent-core.ts';
import { initialize } from './initialize.ts';
import { initialized } from './initialized.ts';
import { status } from './status.ts';
import { shutdown } from './shutdown.ts';

export type { MethodSpec } from '../agent-core.ts';

export const CORE_METHODS: Record<string, MethodSpec> = {
  'claw.initialize': initialize,
  'claw.initialized': initialized,
  'claw.status': status,
  'claw.shutdown': shutdown,
};
