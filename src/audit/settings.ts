// Which audit records are written, from the manifest's Policy `audit` sections (spec §5.9,
// policy.schema.json: log_inputs, log_outputs, log_approvals, retention, destination).
// Decisions (docs/audit.md "Settings"):
// - Several policies: a record any of them asks for is written (booleans OR'd), the longest
//   retention wins, the first declared destination is reported.
// - No policy declares `audit`: the log is off for operator tool calls (`claw run`), and on for the
//   FemtoClaw agent loop, which must record protocol messages (FemtoClaw §17) — `forAgent: true`.
// - Field defaults when a section exists: log_inputs true, log_outputs false (tool outputs are
//   large and are the data the agent handles), log_approvals true.
export interface AuditSettings {
  enabled: boolean;
  /** Model outputs and tool arguments in the records (redacted); otherwise only their SHA-256 and size. */
  logInputs: boolean;
  /** Tool results in `execution.finished` (redacted, bounded); otherwise only the outcome. */
  logOutputs: boolean;
  /** approval.requested / approval.decided records. */
  logApprovals: boolean;
  /** Seconds, or undefined: keep everything. */
  retentionSeconds?: number;
  destination: 'file' | 'sqlite' | 'webhook' | 'syslog';
  /** Things said once at start (an unimplemented destination), never silent. */
  notes: string[];
}

interface AuditSection {
  log_inputs?: boolean;
  log_outputs?: boolean;
  log_approvals?: boolean;
  retention?: string;
  destination?: AuditSettings['destination'];
}

const UNIT_S: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

export function auditSettings(policies: readonly { name: string; spec: { audit?: AuditSection } }[], opts: { forAgent?: boolean } = {}): AuditSettings {
  const sections = policies.map((p) => p.spec.audit).filter((a): a is AuditSection => a !== undefined);
  const s: AuditSettings = { enabled: sections.length > 0 || opts.forAgent === true, logInputs: false, logOutputs: false, logApprovals: false, destination: 'file', notes: [] };
  if (sections.length === 0) {
    s.logInputs = true;
    s.logApprovals = true;
  }
  for (const a of sections) {
    s.logInputs ||= a.log_inputs ?? true;
    s.logOutputs ||= a.log_outputs ?? false;
    s.logApprovals ||= a.log_approvals ?? true;
    const r = a.retention && /^([0-9]+)([smhd])$/.exec(a.retention);
    if (r) s.retentionSeconds = Math.max(s.retentionSeconds ?? 0, Number(r[1]) * UNIT_S[r[2]]);
  }
  const dest = sections.find((a) => a.destination)?.destination;
  if (dest) s.destination = dest;
  // The hash-chained file is always written; sqlite/webhook/syslog are copies of it (./sinks.ts adds
  // a note when a copy cannot be made). Retention deletes whole segments (./segments.ts).
  return s;
}
