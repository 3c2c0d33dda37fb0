// Audit records for one model output and its verdict (FemtoClaw §12 "Record validation failure",
// §16 received / validated / rejected, §17 "Record protocol messages in audit log"). The tool call a
// valid output asks for is recorded by ./gate-audit.ts as `capability.requested` when it enters the
// gates, the one path every tool call takes.
import { sha256Hex } from './hash.ts';
import type { AuditKind } from './record.ts';
import type { RefusedCall } from './outage.ts';
import type { AuditSettings } from './settings.ts';

export interface AuditAppender {
  append(kind: AuditKind, data: Record<string, unknown>): unknown;
  /** A call was refused because `append` threw: counted in the outage record (./outage.ts). */
  noteRefused?(c: RefusedCall): void;
}

const utf8 = /* @__PURE__ */ new TextDecoder();
const enc = /* @__PURE__ */ new TextEncoder();

/** `turn`: the agent loop's id for this model turn, so records of one turn can be joined. */
export function recordValidation(
  log: AuditAppender,
  s: Pick<AuditSettings, 'logInputs'>,
  raw: string | Uint8Array,
  verdict: Verdict,
  full: { turn?: string; provider?: string; mode?: string; providerOutput?: string } = {},
): void {
  // providerOutput: what the provider returned when the protocol message was built from it (native
  // tool calling); kept beside the message, under the same log_inputs rule as the output itself.
  const { providerOutput, ...ctx } = full;
  const bytes = typeof raw === 'string' ? enc.encode(raw) : raw;
  log.append('protocol.received', {
    ...ctx,
    ...(s.logInputs && providerOutput !== undefined ? { provider_output: providerOutput } : {}),
    bytes: bytes.length,
    sha256: sha256Hex(bytes),
    // The output as received (redacted and bounded by the log), so the intent can be reconstructed (§2.5).
    ...(s.logInputs ? { output: typeof raw === 'string' ? raw : utf8.decode(raw) } : {}),
  });
  if (verdict.valid) {
    log.append('protocol.validated', { ...ctx, form: verdict.form, ...(verdict.form === 'tool_call' ? { tool: verdict.tool } : {}) });
    return;
  }
  const { step, reason, detail, field, tool, pos, issues } = verdict;
  log.append('protocol.rejected', {
    ...ctx,
    step,
    reason,
    detail,
    field,
    tool,
    pos,
    issues: issues?.map((i) => ({ path: i.path, keyword: i.keyword })),
  });
}

/**
 * A FemtoClaw verdict as the audit records it (src/femtoclaw/verdict.ts's Verdict passes as one): declared here,
 * so the audit log depends on the fields it writes, not on the validator.
 */
export type Verdict =
  | { valid: true; form: 'message' | 'tool_call'; tool?: string }
  | {
      valid: false;
      step: string;
      reason: string;
      detail: string;
      field?: string;
      tool?: string;
      pos?: number;
      issues?: readonly { path: string; keyword: string }[];
    };
