// Audit records for a tool call through the gates (src/gates/pipeline.ts): capability requested,
// authorization decided, approval requested / decided, execution started / finished. Two touch
// points, so the pipeline keeps its shape: `observe` (PipelineDeps.observe, told when a call is
// authorized and when it is about to execute) and `run` (wraps one runGates call and sees its
// result or refusal). An audit write that fails throws from both, so the call fails: nothing
// executes unrecorded (docs/audit.md "Failure"), and the caller sees -32011 (./refusal.ts).
import { ErrorCode } from '../protocol/errors.ts';
import { sha256Hex } from './hash.ts';
import { canonicalJson } from '../protocol/canonical-json.ts';
import type { AuditAppender } from './protocol-audit.ts';
import type { AuditKind } from './record.ts';
import { auditRefusal } from './refusal.ts';
import type { AuditSettings } from './settings.ts';
import type { GateState, ToolCall } from '../gates/call.ts';
import type { ToolResult } from '../tools/types.ts';

export type CallOrigin = 'agent' | 'operator';

export interface GateAuditor {
  observe(call: ToolCall, stage: 'authorized' | 'executing', state: GateState): void;
  run(call: ToolCall, origin: CallOrigin, go: () => ToolResult | Promise<ToolResult>): ToolResult | Promise<ToolResult>;
}

interface Track {
  origin: CallOrigin;
  /** Already counted as refused in the audit outage record (a call may fail more than one append). */
  noted?: boolean;
  authorized: boolean;
  approval?: string;
  executing: boolean;
  started: number;
}

export function createGateAuditor(log: AuditAppender, s: Pick<AuditSettings, 'logInputs' | 'logOutputs' | 'logApprovals'>, monotonic: () => number): GateAuditor {
  const tracks = new WeakMap<ToolCall, Track>();
  const ids = (c: ToolCall) => ({ tool: c.tool.name, request_id: c.requestId });
  /** One record; a failed write throws the wire error, saying whether the tool had already run. */
  const append = (c: ToolCall, executed: boolean, kind: AuditKind, data: Record<string, unknown>): void => {
    try {
      log.append(kind, data);
    } catch (e) {
      const t = tracks.get(c);
      if (t && !t.noted) {
        t.noted = true;
        log.noteRefused?.({ kind, ...ids(c), origin: t.origin, executed });
      }
      throw auditRefusal(e, { ...ids(c), executed });
    }
  };

  const refused = (c: ToolCall, t: Track, e: unknown) => {
    const code = typeof (e as { code?: unknown })?.code === 'number' ? ((e as { code: number }).code as number) : undefined;
    const message = e instanceof Error ? e.message : String(e);
    if (t.executing) {
      append(c, true, 'execution.finished', { ...ids(c), outcome: 'failed', code, message, duration_ms: Math.round(monotonic() - t.started) });
    } else if (t.approval && (code === ErrorCode.ApprovalDenied || code === ErrorCode.ApprovalTimeout)) {
      if (s.logApprovals) append(c, false, 'approval.decided', { ...ids(c), rule_id: t.approval, decision: code === ErrorCode.ApprovalDenied ? 'denied' : 'timeout', message });
    } else {
      // The refusal's data names what decided it: a policy rule (-32011 rule_id, policy) or a sandbox rule (-32010 rule).
      const data = (e as { data?: { rule_id?: unknown; policy?: unknown; rule?: unknown } })?.data;
      const rule = typeof data?.rule_id === 'string' ? data.rule_id : typeof data?.rule === 'string' ? data.rule : undefined;
      const policy = typeof data?.policy === 'string' ? data.policy : undefined;
      append(c, false, 'authorization.decided', { ...ids(c), decision: 'deny', gate: gateOf(code, e, t), code, message, ...(rule ? { rule_id: rule } : {}), ...(policy ? { policy } : {}) });
    }
  };

  return {
    observe(c, stage, state) {
      const t = tracks.get(c);
      if (!t) return; // a call not started through run(): nothing to join it to
      if (stage === 'authorized') {
        t.authorized = true;
        t.approval = state.approval?.by;
        const decision = state.approval ? 'require-approval' : state.audit ? 'audit-only' : 'allow';
        append(c, false, 'authorization.decided', { ...ids(c), decision, rule_id: state.approval?.by ?? state.audit?.ruleId, policy: state.audit?.policy });
        if (state.approval && s.logApprovals) append(c, false, 'approval.requested', { ...ids(c), rule_id: state.approval.by, timeout_ms: state.approval.timeoutMs });
        return;
      }
      // Every gate passed. After an approval this means approved, or timed out with
      // default_if_timeout: allow (the approval gate's log line says which).
      if (t.approval && s.logApprovals) append(c, false, 'approval.decided', { ...ids(c), rule_id: t.approval, decision: 'passed' });
      append(c, false, 'execution.started', { ...ids(c), sandbox_level: c.sandbox.level });
      t.executing = true;
      t.started = monotonic();
    },
    run(c, origin, go) {
      const t: Track = { origin, authorized: false, executing: false, started: 0 };
      tracks.set(c, t);
      append(c, false, 'capability.requested', {
        ...ids(c),
        origin,
        identity: c.identity,
        skill: c.skill,
        ...(s.logInputs ? { args: c.args } : { args_sha256: sha256Hex(canonicalJson(c.args)) }),
      });
      const done = (r: ToolResult): ToolResult => {
        append(c, true, 'execution.finished', {
          ...ids(c),
          outcome: r.isError ? 'error' : 'ok',
          duration_ms: Math.round(monotonic() - t.started),
          ...(s.logOutputs ? { result: r.content } : {}),
        });
        return r;
      };
      let r: ToolResult | Promise<ToolResult>;
      try {
        r = go();
      } catch (e) {
        refused(c, t, e);
        throw e;
      }
      if (!(r instanceof Promise)) return done(r);
      return r.then(done, (e) => {
        refused(c, t, e);
        throw e;
      });
    },
  };
}

function gateOf(code: number | undefined, e: unknown, t: Track): string {
  switch (code) {
    case ErrorCode.InvalidParams:
      return 'schema';
    case ErrorCode.PolicyDenied: {
      const rule = String((e as { data?: { rule_id?: unknown } }).data?.rule_id ?? '');
      // audit:*: an earlier record of this call could not be written (./refusal.ts).
      return rule.startsWith('autonomy:') ? 'autonomy' : rule.startsWith('audit:') ? 'audit' : 'policy';
    }
    case ErrorCode.ProviderQuotaExceeded:
      return 'quota';
    case ErrorCode.SandboxDenied:
      return 'sandbox';
    case ErrorCode.InvalidRequest:
      return 'stopping';
    default:
      return t.authorized ? 'after-authorization' : 'internal';
  }
}
