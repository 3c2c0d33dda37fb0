// Gate 4: approval (spec §9.3.2, runtime profile §10 "Approval Flow"). The call waits; the pending
// approval is announced to every transport as a `claw.tool.approval_requested` notification
// (docs/tools.md); claw.tool.approve lets it run, claw.tool.deny → -32013, no answer within the
// timeout → the rule's default_if_timeout (`deny` → -32012).
import { ErrorCode, ProtocolError } from '../protocol/errors.ts';
import { notification } from '../protocol/jsonrpc.ts';
import type { GateDeps, GateState, ToolCall } from './call.ts';

export async function approvalGate(call: ToolCall, deps: GateDeps, state: GateState, redact: (v: unknown) => unknown): Promise<void> {
  const a = state.approval;
  if (!a) return;
  const tool = call.tool.name;
  const expires = new Date(deps.clock.now() + a.timeoutMs).toISOString();
  // Pending before it is announced: a transport may decide inside the announce (claw chat denies at once
  // for a channel user who may not approve), and that decision must not find an unknown request_id.
  const waiting = deps.approvals.wait(call.requestId, a.timeoutMs, call.signal);
  deps.announce(
    notification('claw.tool.approval_requested', {
      request_id: call.requestId,
      tool,
      arguments: redact(call.args),
      rule_id: a.by,
      ...(a.reason ? { reason: a.reason } : {}),
      timeout_seconds: Math.round(a.timeoutMs / 1000),
      expires_at: expires,
    }),
  );
  deps.log.info('approval requested', { tool, request_id: call.requestId, rule_id: a.by, expires_at: expires });
  const outcome = await waiting;
  deps.log.info('approval outcome', { tool, request_id: call.requestId, outcome: outcome.kind });
  switch (outcome.kind) {
    case 'approved':
      return;
    case 'denied':
      throw new ProtocolError(ErrorCode.ApprovalDenied, `Approval denied${outcome.reason ? `: ${outcome.reason}` : ''}`, {
        request_id: call.requestId,
        tool,
        ...(outcome.reason ? { reason: outcome.reason } : {}),
      });
    case 'timeout':
      if (a.defaultIfTimeout === 'allow') return;
      throw new ProtocolError(ErrorCode.ApprovalTimeout, `Approval timeout: no decision within ${Math.round(a.timeoutMs / 1000)} s`, {
        request_id: call.requestId,
        tool,
        timeout_seconds: Math.round(a.timeoutMs / 1000),
      });
    case 'cancelled':
      throw new ProtocolError(ErrorCode.ApprovalTimeout, 'Approval timeout: the session ended before a decision', { request_id: call.requestId, tool });
  }
}
