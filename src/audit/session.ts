// One session's audit: settings from the manifest's policies, the log opened once, and the two
// recorders the runtime needs (the gate auditor for tool calls, recordVerdict for model outputs).
// A composition root calls openAuditSession at STARTING and close() at STOPPING; undefined means
// audit is off (no Policy `audit` and not an agent loop). docs/audit.md "Wiring".
import { AuditLog, type AuditFile, type FsyncPolicy } from './log.ts';
import { openAuditFile } from './node-file.ts';
import { auditSettings, type AuditSettings } from './settings.ts';
import { createGateAuditor, type GateAuditor } from './gate-audit.ts';
import { recordValidation } from './protocol-audit.ts';
import type { Verdict } from '../femtoclaw/verdict.ts';

export interface AuditSessionOptions {
  policies: readonly { name: string; spec: Record<string, any> }[];
  /** The FemtoClaw agent loop runs in this session: audit is on even without a Policy `audit`. */
  forAgent?: boolean;
  /** The log file; the suggested place is `${data_dir}/audit/audit.jsonl`. */
  path: string;
  now(): number;
  monotonic(): number;
  redact(s: string): string;
  fsync?: FsyncPolicy;
  /** Tests: a file other than the local file system. */
  file?: AuditFile;
}

export interface AuditSession {
  settings: AuditSettings;
  log: AuditLog;
  /** PipelineDeps.observe = auditor.observe; wrap runGates with auditor.run. */
  auditor: GateAuditor;
  recordVerdict(raw: string | Uint8Array, verdict: Verdict, ctx?: { turn?: string; provider?: string }): void;
  close(): void;
}

export function openAuditSession(o: AuditSessionOptions): AuditSession | undefined {
  const settings = auditSettings(o.policies as { name: string; spec: { audit?: never } }[], { forAgent: o.forAgent });
  if (!settings.enabled) return undefined;
  const log = AuditLog.open({ file: o.file ?? openAuditFile(o.path), now: o.now, redact: o.redact, fsync: o.fsync });
  return {
    settings,
    log,
    auditor: createGateAuditor(log, settings, o.monotonic),
    recordVerdict: (raw, verdict, ctx) => recordValidation(log, settings, raw, verdict, ctx),
    close: () => log.close(),
  };
}
