// The gates' wire errors, each with the spec's code and a `data` a client can act on.
import { ErrorCode, ProtocolError } from '../protocol/errors.ts';

/** spec §9.4 example: -32011 carries `{ rule_id, tool, action }`. */
export const policyDenied = (tool: string, ruleId: string, reason?: string, extra?: Record<string, unknown>) =>
  new ProtocolError(ErrorCode.PolicyDenied, `Policy denied: ${reason ?? `rule ${ruleId} blocks ${tool}`}`, { rule_id: ruleId, tool, action: 'deny', ...extra });

export const sandboxDenied = (tool: string, rule: string, detail: string, extra?: Record<string, unknown>) =>
  new ProtocolError(ErrorCode.SandboxDenied, `Sandbox denied: ${detail}`, { tool, rule, ...extra });
