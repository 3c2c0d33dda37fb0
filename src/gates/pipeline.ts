// claw.tool.call, gate by gate, in one documented order (docs/tools.md):
//   1 schema  2 autonomy  3 policy  4 approval  5 quota  6 sandbox, then execution.
// Every path that executes a tool (the operator's claw.tool.call, the agent loop's tool_call, a
// composite tool's sub-call) goes through runGates: one code path, not two.
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
  /**
   * Optional observer (the audit log, src/audit/gate-audit.ts): told when a call has
   * passed autonomy and policy (`authorized`; `state.approval` says one is required) and when it is
   * about to execute (every gate passed). Refusals and results it sees from runGates' own outcome.
   */
  observe?(call: ToolCall, stage: 'authorized' | 'executing', state: GateState): void;
}

/**
 * Runs the gates in order and then the tool. One async path for every caller: a gate's refusal is a
 * rejection with its ProtocolError.
 */
export async function runGates(call: ToolCall, check: ArgumentCheck, deps: PipelineDeps): Promise<ToolResult> {
  schemaGate(call.tool.name, check, call.args);
  const state: GateState = {};
  autonomyGate(call, deps, state);
  policyGate(call, deps, state);
  deps.observe?.(call, 'authorized', state);
  await approvalGate(call, deps, state, deps.redactValue);
  await quotaGate(call, deps);
  // A session that ended while this call waited (approval, quota) runs nothing more.
  if (call.signal.aborted) throw stoppingError(call.tool.name);
  sandboxGate(call, deps.isolationProblem);
  deps.observe?.(call, 'executing', state);
  const audit = state.audit;
  if (!audit) return executeGate(call, deps, deps.redactText, deps.redactValue);
  const started = deps.clock.monotonic();
  const result = await executeGate(call, deps, deps.redactText, deps.redactValue);
  return audited(call, deps, audit, started, result);
}
/** audit-only (spec §5.9): executed, and recorded in detail. */
function audited(call: ToolCall, deps: PipelineDeps, audit: NonNullable<GateState['audit']>, started: number, result: ToolResult): ToolResult {
  deps.log.info('tool call audited', {
    event: 'tool.audit',
    tool: call.tool.name,
    request_id: call.requestId,
    identity: call.identity,
    rule_id: audit.ruleId,
    policy: audit.policy,
    arguments: deps.redactValue(call.args),
    is_error: result.isError === true,
    duration_ms: Math.round(deps.clock.monotonic() - started),
  });
  return result;
}
