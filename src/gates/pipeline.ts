// claw.tool.call, gate by gate, in one documented order (docs/tools.md):
//   1 schema  2 autonomy  3 policy  4 approval  5 quota  6 sandbox, then execution.
// Every path that executes a tool — the operator's claw.tool.call now, the agent loop's tool_call
// later — goes through runGates: one code path, not two.
import { schemaGate } from './schema-gate.ts';
import { autonomyGate } from './autonomy-gate.ts';
import { policyGate } from './policy-gate.ts';
import { approvalGate } from './approval-gate.ts';
import { quotaGate } from './quota-gate.ts';
import { sandboxGate } from './sandbox-gate.ts';
import { executeGate, stoppingError } from './execute-gate.ts';
import type { ArgumentCheck } from '../tools/json-schema.ts';
import type { ToolImpl, ToolResult } from '../tools/types.ts';
import type { SandboxSpec } from '../manifest/schema/index.ts';
import type { GateDeps, GateState, ToolCall } from './call.ts';

export interface PipelineDeps extends GateDeps {
  isolationProblem(sb: SandboxSpec, impl: ToolImpl): string | undefined;
  redactValue(v: unknown): unknown;
  redactText(s: string): string;
}

export async function runGates(call: ToolCall, check: ArgumentCheck, deps: PipelineDeps): Promise<ToolResult> {
  schemaGate(call.tool.name, check, call.args);
  const state: GateState = {};
  autonomyGate(call, deps, state);
  policyGate(call, deps, state);
  await approvalGate(call, deps, state, deps.redactValue);
  await quotaGate(call, deps);
  // A session that ended while this call waited (approval, quota) runs nothing more.
  if (call.signal.aborted) throw stoppingError(call.tool.name);
  sandboxGate(call, deps.isolationProblem);
  const started = deps.clock.monotonic();
  const result = await executeGate(call, deps, deps.redactText, deps.redactValue);
  if (state.audit) {
    // audit-only (spec §5.9): executed, and recorded in detail.
    deps.log.info('tool call audited', {
      event: 'tool.audit',
      tool: call.tool.name,
      request_id: call.requestId,
      identity: call.identity,
      rule_id: state.audit.ruleId,
      policy: state.audit.policy,
      arguments: deps.redactValue(call.args),
      is_error: result.isError === true,
      duration_ms: Math.round(deps.clock.monotonic() - started),
    });
  }
  return result;
}
