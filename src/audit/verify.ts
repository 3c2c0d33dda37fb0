// `claw audit verify`: recompute the chain from the first line and report the first record that
// does not hold (docs/audit.md "Verifying"). Pure: text in, result out.
import { parseStrictJson } from '../protocol/strict-json.ts';
import { canonicalJson } from '../protocol/canonical-json.ts';
import { AUDIT_KINDS, GENESIS, recordHash, type AuditRecord } from './record.ts';
import { outageIssue, type OutageData } from './outage.ts';

export type BreakReason =
  | 'unreadable' // not strict JSON (a flipped byte usually lands here)
  | 'not_canonical' // JSON, but not the canonical bytes the writer writes
  | 'bad_shape' // fields missing or of the wrong type, unknown kind, an `audit.outage` whose data is not an outage account
  | 'hash_mismatch' // the content no longer matches its own hash: edited
  | 'prev_mismatch' // does not follow the record before it: deleted, inserted or reordered
  | 'seq_mismatch' // sequence number is not the previous one + 1
  | 'torn_tail'; // the last line has no newline: a write cut short (the writer repairs it on open)

export interface VerifyResult {
  ok: boolean;
  /** Records that verified, in order, before any break. */
  verified: number;
  /** Hash of the last verified record (GENESIS for an empty log): compare with a copy kept elsewhere. */
  head: string;
  broken?: { line: number; seq?: number; reason: BreakReason; detail: string };
  /** seq of the last verified record (-1 for none, or the seq before `from`). */
  lastSeq: number;
  /** The first record's seq and prev (what a retention boundary links to). */
  start?: { seq: number; prev: string };
  /** `audit.outage` records among the verified ones: times the log could not write, and what it refused. */
  outages?: OutageSummary;
}

/** Outages in a chain: their number, the calls refused in all, and the first ones in detail. */
export interface OutageSummary {
  count: number;
  refused: number;
  /** The first MAX_LISTED outages (a log that failed all day has many). */
  first: { seq: number; line: number; file?: string; since: string; until: string; refused: number; at_close?: true }[];
}

export const MAX_LISTED_OUTAGES = 20;

/** Add one `audit.outage` record to a summary (segments.ts merges files with it too). */
export function addOutage(s: OutageSummary | undefined, o: OutageSummary['first'][number]): OutageSummary {
  const out = s ?? { count: 0, refused: 0, first: [] };
  out.count++;
  out.refused += o.refused;
  if (out.first.length < MAX_LISTED_OUTAGES) out.first.push(o);
  return out;
}

const KINDS = new Set<string>(AUDIT_KINDS);
const HEX64 = /^[0-9a-f]{64}$/;
/** A record line is bounded by the writer's sanitizer; anything this big was not written by it. */
const MAX_LINE_BYTES = 4 * 1024 * 1024;

const utf8 = /* @__PURE__ */ new TextDecoder();

/**
 * Verify a log given as bytes (as read from disk: invalid UTF-8 is a break) or as text. `from`: the
 * chain continues a previous segment's head (./segments.ts); `'retained'`: the first segment kept
 * after retention deleted older ones — its first record may follow a deleted record, but only if it
 * is an `audit.segment` record (a rotation wrote it), never an arbitrary record cut off a file.
 */
export function verifyAuditText(text: string | Uint8Array, from?: { head: string; seq: number } | 'retained'): VerifyResult {
  let head = from !== undefined && from !== 'retained' ? from.head : GENESIS;
  let prevSeq = from !== undefined && from !== 'retained' ? from.seq : -1;
  let first: VerifyResult['start'];
  let verified = 0;
  let start = 0;
  let line = 0;
  let outages: OutageSummary | undefined;
  const found = () => ({ ...(first ? { start: first } : {}), ...(outages ? { outages } : {}) });
  const broken = (reason: BreakReason, detail: string, seq?: number): VerifyResult => ({ ok: false, verified, head, lastSeq: prevSeq, ...found(), broken: { line, seq, reason, detail } });
  while (start < text.length) {
    line++;
    const nl = typeof text === 'string' ? text.indexOf('\n', start) : text.indexOf(0x0a, start);
    if (nl === -1) return broken('torn_tail', `line ${line} has no newline: the last write was cut short`);
    const raw = text.slice(start, nl);
    start = nl + 1;
    const p = parseStrictJson(raw, { maxBytes: MAX_LINE_BYTES, maxDepth: 64 });
    if (!p.ok) return broken('unreadable', `not valid JSON (${p.code} at ${p.pos})`);
    const src = typeof raw === 'string' ? raw : utf8.decode(raw);
    const r = p.value as AuditRecord;
    const seq = typeof (r as any)?.seq === 'number' ? r.seq : undefined;
    if (!isRecord(r)) return broken('bad_shape', 'not an audit record', seq);
    if (canonicalJson(r) !== src) return broken('not_canonical', 'the line is not in canonical form', seq);
    if (recordHash(r) !== r.hash) return broken('hash_mismatch', 'content does not match its hash (edited)', seq);
    // Well hashed, so written as it stands — but by whom: the writer only writes outage accounts.
    const issue = r.kind === 'audit.outage' ? outageIssue(r.data) : undefined;
    if (issue !== undefined) return broken('bad_shape', `not an outage account: ${issue}`, seq);
    if (verified === 0) {
      first = { seq: r.seq, prev: r.prev };
      if (from === 'retained' && r.prev !== GENESIS && r.kind === 'audit.segment') {
        head = r.prev;
        prevSeq = r.seq - 1;
      }
    }
    if (r.prev !== head) return broken('prev_mismatch', verified === 0 ? 'the first record does not start the chain' : `does not follow record ${prevSeq} (a record was deleted, inserted or moved)`, seq);
    if (r.seq !== prevSeq + 1) return broken('seq_mismatch', `sequence ${r.seq} after ${prevSeq}`, seq);
    head = r.hash;
    prevSeq = r.seq;
    verified++;
    if (r.kind === 'audit.outage') {
      const d = r.data as unknown as OutageData;
      outages = addOutage(outages, { seq: r.seq, line, since: d.since, until: d.until, refused: d.refused, ...(d.at_close ? { at_close: true as const } : {}) });
    }
  }
  return { ok: true, verified, head, lastSeq: prevSeq, ...found() };
}

function isRecord(r: any): r is AuditRecord {
  if (typeof r !== 'object' || r === null || Array.isArray(r)) return false;
  const keys = Object.keys(r);
  return (
    keys.length === 7 &&
    r.v === 1 &&
    Number.isSafeInteger(r.seq) &&
    r.seq >= 0 &&
    typeof r.ts === 'string' &&
    KINDS.has(r.kind) &&
    typeof r.prev === 'string' &&
    HEX64.test(r.prev) &&
    typeof r.hash === 'string' &&
    HEX64.test(r.hash) &&
    typeof r.data === 'object' &&
    r.data !== null &&
    !Array.isArray(r.data)
  );
}
