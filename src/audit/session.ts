// One session's audit: settings from the manifest's policies, the log opened once, and the two
// recorders the runtime needs (the gate auditor for tool calls, recordVerdict for model outputs).
// A composition root calls openAuditSession at STARTING and close() at STOPPING; undefined means
// audit is off (no Policy `audit` and not an agent loop). docs/audit.md "Wiring".
import { dirnameOf } from '../manifest/reader.ts';
import { AuditError, AuditLog, writeFailed, type AuditFile, type AuditSegments, type FsyncPolicy, type OpenOutage } from './log.ts';
import { auditRefusal } from './refusal.ts';
import { openAuditFile } from './node-file.ts';
import { nodeAuditSegments } from './node-segments.ts';
import { openAuditSink, type AuditMirror, type AuditSinkDeps } from './sinks.ts';
import type { AuditRuntimeConfig } from './config.ts';
import { auditSettings, type AuditSettings } from './settings.ts';
import { createGateAuditor, type GateAuditor } from './gate-audit.ts';
import { recordValidation, type Verdict } from './protocol-audit.ts';

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
  /** Tests: a file other than the local file system (no segments then, unless `segments` is given). */
  file?: AuditFile;
  segments?: AuditSegments;
  /** claw.runtime.yaml `audit:` (segment sizes, where the sqlite/webhook/syslog copies go). */
  runtime?: AuditRuntimeConfig;
  /** What the mirrors need (secrets for the webhook token, the SQLite adapter, a logger). */
  sinkDeps?: AuditSinkDeps;
  /** Problems that do not stop the log (rotation, pruning, a mirror), told once each. */
  warn?(msg: string, fields?: Record<string, unknown>): void;
  /** One per runtime: opens refused for a full disk, written as an `audit.outage` by the next open that succeeds. */
  openOutage?: OpenOutage;
}

/** Default segment span: a quarter of the retention (so at most ~25% more than the retention is kept), ≤ 1 day. */
export function segmentMaxAgeMs(retentionSeconds: number, runtime?: AuditRuntimeConfig): number {
  if (runtime?.segment_seconds !== undefined) return runtime.segment_seconds * 1000;
  return Math.max(1000, Math.min(86_400_000, Math.floor((retentionSeconds * 1000) / 4)));
}

export interface AuditSession {
  settings: AuditSettings;
  log: AuditLog;
  /** PipelineDeps.observe = auditor.observe; wrap runGates with auditor.run. */
  auditor: GateAuditor;
  recordVerdict(raw: string | Uint8Array, verdict: Verdict, ctx?: { turn?: string; provider?: string; mode?: string; providerOutput?: string }): void;
  /** The copy for `destination` sqlite/webhook/syslog, when configured. */
  mirror?: AuditMirror;
  /** Closes the file synchronously; the promise settles when the mirror has flushed (best effort). */
  close(): Promise<void>;
}

export function openAuditSession(o: AuditSessionOptions): AuditSession | undefined {
  const settings = auditSettings(o.policies as { name: string; spec: { audit?: never } }[], { forAgent: o.forAgent });
  if (!settings.enabled) return undefined;
  const warn = o.warn ?? (() => {});
  const retentionMs = settings.retentionSeconds !== undefined ? settings.retentionSeconds * 1000 : undefined;
  // Segments only when something needs them (a retention): otherwise one file, as before.
  const segments =
    o.segments ??
    (retentionMs !== undefined && !o.file
      ? nodeAuditSegments(dirnameOf(o.path), { maxAgeMs: segmentMaxAgeMs(settings.retentionSeconds!, o.runtime), maxBytes: o.runtime?.segment_max_bytes ?? 64 * 1024 * 1024, retentionMs })
      : undefined);
  if (segments && retentionMs !== undefined) {
    settings.notes.push(`audit retention ${settings.retentionSeconds} s: segment files of ${segments.maxAgeMs / 1000} s in ${dirnameOf(o.path)}, closed segments older than the retention deleted (verify the directory)`);
  }
  const mirror = openAuditSink(settings, { dir: dirnameOf(o.path), runtime: o.runtime, deps: o.sinkDeps, warn });
  if (mirror.note) settings.notes.push(mirror.note);
  let log: AuditLog;
  try {
    log = AuditLog.open({ file: o.file ?? openAuditFile(o.path), now: o.now, monotonic: o.monotonic, redact: o.redact, fsync: o.fsync, segments, sink: mirror.sink, warn, openOutage: o.openOutage });
  } catch (e) {
    void mirror.sink?.close().catch(() => {});
    // claw.initialize answers why (full disk, a corrupt last record), not a bare -32603.
    throw auditRefusal(e instanceof AuditError ? e : writeFailed(e, o.path, 'the audit log could not be opened at'), { state: 'ERROR' });
  }
  // Model outputs: a record that cannot be written stops the turn before its tool call (nothing ran).
  const verdicts = {
    append(kind: Parameters<AuditLog['append']>[0], data: Record<string, unknown>) {
      try {
        return log.append(kind, data);
      } catch (e) {
        // The turn stops at its first record that fails: one refusal per failed append.
        log.noteRefused({ kind, ...(typeof data.turn === 'string' ? { turn: data.turn } : {}), executed: false });
        throw auditRefusal(e, { executed: false });
      }
    },
  };
  return {
    settings,
    log,
    mirror: mirror.sink,
    auditor: createGateAuditor(log, settings, o.monotonic),
    recordVerdict: (raw, verdict, ctx) => recordValidation(verdicts, settings, raw, verdict, ctx),
    close: async () => {
      log.close();
      await mirror.sink?.close().catch(() => {});
    },
  };
}
