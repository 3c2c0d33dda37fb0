// What the audit log refused while it could not write (docs/audit.md "Failure", "Outage record").
// Spec §5.8 rule actions: a denied action is blocked *and its attempt logged*; a call refused because
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
  at_close?: true;
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
    const { kind, request_id, tool, origin, turn, executed } = c;
    this.calls.push({
      ts: new Date(at).toISOString(),
      record: kind,
      ...(request_id !== undefined ? { request_id: cut(request_id) } : {}),
      ...(tool !== undefined ? { tool: cut(tool) } : {}),
      ...(origin !== undefined ? { origin: cut(origin) } : {}),
      ...(turn !== undefined ? { turn: cut(turn) } : {}),
      executed,
    });
  }

  get refusedTotal(): number {
    return this.refusedCount;
  }

  data(atClose = false): OutageData {
    return {
      since: new Date(this.since).toISOString(),
      until: new Date(this.until).toISOString(),
      failed_appends: this.failedAppends,
      refused: this.refusedCount,
      errno: this.errnos[0] ?? 'unknown',
      errnos: [...this.errnos],
      calls: this.calls.map((c) => ({ ...c })),
      calls_omitted: this.refusedCount - this.calls.length,
      ...(atClose ? { at_close: true as const } : {}),
    };
  }
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const count = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0;
const optString = (v: unknown) => v === undefined || typeof v === 'string';

/**
 * Why `data` is not an outage account the writer could have written, or undefined. The hash proves
 * the bytes were not changed after writing; this proves a well-hashed `audit.outage` record is not a
 * made-up one of another shape (verify reports it as `bad_shape`).
 */
export function outageIssue(data: Record<string, unknown>): string | undefined {
  const d = data as Partial<Record<keyof OutageData, unknown>>;
  if (typeof d.since !== 'string' || !ISO.test(d.since) || typeof d.until !== 'string' || !ISO.test(d.until)) return 'since/until are not ISO 8601 UTC times';
  if (d.until < d.since) return 'until is before since';
  if (!count(d.failed_appends) || !count(d.refused) || !count(d.calls_omitted)) return 'failed_appends, refused and calls_omitted must be counts';
  if ((d.failed_appends as number) < 1) return 'an outage has at least one failed append';
  if (typeof d.errno !== 'string' || !Array.isArray(d.errnos) || d.errnos.length < 1 || !d.errnos.every((e) => typeof e === 'string') || d.errnos[0] !== d.errno) return 'errno/errnos do not hold the error codes';
  if (!Array.isArray(d.calls)) return 'calls is not a list';
  if (d.calls.length + (d.calls_omitted as number) !== d.refused) return 'calls + calls_omitted is not refused';
  for (const c of d.calls as unknown[]) {
    const e = c as Record<string, unknown>;
    if (typeof e !== 'object' || e === null || Array.isArray(e)) return 'a call is not an object';
    const extra = Object.keys(e).filter((k) => !CALL_KEYS.has(k));
    if (extra.length > 0) return `a call has fields an outage record never holds: ${extra.join(', ')}`;
    if (typeof e.ts !== 'string' || !ISO.test(e.ts) || typeof e.record !== 'string' || typeof e.executed !== 'boolean') return 'a call lacks ts, record or executed';
    if (!optString(e.request_id) || !optString(e.tool) || !optString(e.origin) || !optString(e.turn)) return 'a call identifier is not a string';
  }
  const extra = Object.keys(d).filter((k) => !DATA_KEYS.has(k));
  if (extra.length > 0) return `fields an outage record never holds: ${extra.join(', ')}`;
  if (d.at_close !== undefined && d.at_close !== true) return 'at_close is not true';
  return undefined;
}

const CALL_KEYS = new Set(['ts', 'record', 'request_id', 'tool', 'origin', 'turn', 'executed']);
const DATA_KEYS = new Set(['since', 'until', 'failed_appends', 'refused', 'errno', 'errnos', 'calls', 'calls_omitted', 'at_close']);
