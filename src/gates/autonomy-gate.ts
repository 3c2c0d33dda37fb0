// Gate 2: the Identity's autonomy (spec §5.1). `observer` executes nothing; `supervised` needs a
// human approval for any tool with side effects (no readOnlyHint: true); `autonomous` leaves it to
// policy. Annotations are the manifest's (untrusted hints, spec §5.4), so a tool is read-only only
// when its declaration says so.
import { policyDenied } from './errors.ts';
import type { GateDeps, GateState, ToolCall } from './call.ts';

export function autonomyGate(call: ToolCall, deps: GateDeps, state: GateState): void {
  const autonomy = deps.identity.spec.autonomy ?? 'supervised';
  if (autonomy === 'observer') {
    throw policyDenied(call.tool.name, 'autonomy:observer', `identity ${deps.identity.name} is an observer and executes no tools (spec §5.1)`);
  }
  if (autonomy === 'supervised' && call.tool.annotations.readOnlyHint !== true) {
    state.approval = {
      by: 'autonomy:supervised',
      reason: `identity ${deps.identity.name} is supervised and ${call.tool.name} is not read-only`,
      timeoutMs: deps.defaultApprovalTimeoutMs,
      defaultIfTimeout: 'deny',
    };
  }
}
