// What the audit log refused while it could not write (docs/audit.md "Failure", "Outage record").
// Spec §5.9 "Rule Actions": a denied action is blocked *and its attempt logged*; a call refused because
// its record could not be written (-32011 `audit:write_failed`) cannot be logged when it happens, so
// the writer keeps a bounded account in memory and writes it as one `audit.outage` record — in the
// hash chain like any other — before the first record that succeeds again. Identifiers only (request
// ids, tool names, the record kind that failed): never argument values, outputs or secrets.
import type { AuditKind } from './record.ts';

/** One refused call or model output, as the caller that was refused describes it. */
export interface RefusedCall {
  /** The record that could not be written (`capability.requested`, `protocol.received`…). */
  kind: AuditKind;
  request_id?: string;
  tool?: string;
  /** `agent` or `operator` for a tool call (src/audit/gate-audit.ts). */
  origin?: string;
  /** The agent loop's turn id, for a model output. */
  turn?: string;
  /** The tool had run and its result was withheld (its `execution.finished` could not be written). */
  executed: boolean;
}

/** Refused calls listed one by one in the record; the rest are counted. */
export const OUTAGE_MAX_CALLS = 32;
/** Distinct error codes kept (ENOSPC, EIO…): a bound, not an expectation. */
const MAX_ERRNOS = 8;
/** An identifier longer than this is cut: request ids come from the client. */
const MAX_ID = 128;

export interface OutageData {
  /** When the first append failed and when the last one did (ISO 8601 UTC). */
  since: string;
  until: string;
  /** Appends that failed (a call may fail more than one: its refusal record too). */
  failed_appends: number;
  /** Calls and model outputs refused. */
  refused: number;
  /** The first failure's file system error code (`unknown` when it had none) and every distinct one. */
  errno: string;
  errnos: string[];
  /** The first refused calls, in order; `calls_omitted` = refused − calls.length. */
  calls: (Omit<RefusedCall, 'kind'> & { record: AuditKind; ts: string })[];
  calls_omitted: number;
  /** Written by close() while the log was still failing (the last chance before the process stops). */
  at_close?: true | undefined;
}

const cut = (s: string | undefined) => (s === undefined ? undefined : s.length > MAX_ID ? `${s.slice(0, MAX_ID)}…` : s);

/** The account of one outage: from the first failed append until its record is written. */
export class OutageAccount {
  private readonly since: number;
  private until: number;
  private failedAppends = 0;
  private refusedCount = 0;
  private readonly errnos: string[] = [];
  private readonly calls: OutageData['calls'] = [];

  constructor(
    at: number,
    private readonly maxCalls = OUTAGE_MAX_CALLS,
  ) {
    this.since = at;
    this.until = at;
  }

  failed(at: number, errno: string | undefined): void {
    this.failedAppends++;
    this.until = Math.max(this.until, at);
    const code = errno ?? 'unknown';
    if (!this.errnos.includes(code) && this.errnos.length < MAX_ERRNOS) this.errnos.push(code);
  }

  refused(at: number, c: RefusedCall): void {
    this.refusedCount++;
    this.until = Math.max(this.until, at);
    if (this.calls.length >= this.maxCalls) return;
    // Undefined members are dropped when the record is written (./sanitize.ts).
    this.calls.push({ ts: new Date(at).toISOString(), record: c.kind, request_id: cut(c.request_id), tool: cut(c.tool), origin: cut(c.origin), turn: cut(c.turn), executed: c.executed });
  }

  data(atClose = false): OutageData {
    return {
      since: new Date(this.since).toISOString(),
      until: new Date(this.until).toISOString(),
      failed_appends: this.failedAppends,
      refused: this.refusedCount,
      errno: this.errnos[0] ?? 'unknown',
      errnos: [...this.errnos],
      calls: this.calls,
      calls_omitted: this.refusedCount - this.calls.length,
      at_close: atClose || undefined,
    };
  }
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const isCount = (n: unknown) => Number.isSafeInteger(n) && (n as number) >= 0;
const isTime = (t: unknown) => typeof t === 'string' && ISO.test(t);
const DATA_KEYS = ['since', 'until', 'failed_appends', 'refused', 'errno', 'errnos', 'calls', 'calls_omitted', 'at_close'];
const CALL_KEYS = ['ts', 'record', 'request_id', 'tool', 'origin', 'turn', 'executed'];
const unknownKeys = (o: object, known: string[]) => Object.keys(o).filter((k) => !known.includes(k));

/**
 * Why `data` is not an outage account the writer could have written, or undefined. The hash proves
 * the bytes were not changed after writing; this proves a well-hashed `audit.outage` record is not a
 * made-up one of another shape — fields it never holds (argument values), counts that do not add up
 * (verify reports it as `bad_shape`).
 */
export function outageIssue(data: Record<string, unknown>): string | undefined {
  const d = data as Record<string, any>;
  const extra = unknownKeys(d, DATA_KEYS);
  if (extra.length > 0) return `unknown fields ${extra.join(', ')}`;
  if (!isTime(d.since) || !isTime(d.until) || d.until < d.since) return 'since/until';
  if (![d.failed_appends, d.refused, d.calls_omitted].every(isCount) || d.failed_appends < 1) return 'counts';
  if (!Array.isArray(d.errnos) || d.errnos[0] !== d.errno || !d.errnos.every((e: unknown) => typeof e === 'string')) return 'errno/errnos';
  if (!Array.isArray(d.calls) || d.calls.length + d.calls_omitted !== d.refused) return 'calls + calls_omitted is not refused';
  for (const c of d.calls) {
    if (typeof c !== 'object' || c === null || Array.isArray(c)) return 'a call is not an object';
    const bad = unknownKeys(c, CALL_KEYS);
    if (bad.length > 0) return `unknown call fields ${bad.join(', ')}`;
    if (!isTime(c.ts) || typeof c.record !== 'string' || typeof c.executed !== 'boolean' || ['request_id', 'tool', 'origin', 'turn'].some((k) => c[k] !== undefined && typeof c[k] !== 'string')) return 'a call';
  }
  if (d.at_close !== undefined && d.at_close !== true) return 'at_close';
  return undefined;
}
