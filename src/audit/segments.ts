// Segment files: how retention (Policy `audit.retention`, spec §5.9) deletes old records without
// breaking `claw audit verify` (docs/audit.md "Segments and retention"). The chain never restarts:
// the active file `audit.jsonl` is renamed to a closed segment and a fresh active file begins with an
// `audit.segment` record whose `prev` is the closed segment's head (and whose data names it). Whole
// closed segments older than the retention are deleted; the first kept segment's link to a deleted
// one is the retention boundary, reported by the verifier, not a break. Pure: names and bytes in.
import { GENESIS } from './record.ts';
import { addOutage, verifyAuditText, type BreakReason, type OutageSummary } from './verify.ts';

export const ACTIVE_SEGMENT = 'audit.jsonl';
/** audit-<first seq, 12 digits>-<closed at, ms since the epoch>.jsonl: sorts by seq, ages by name. */
const CLOSED = /^audit-([0-9]{12})-([0-9]{13})\.jsonl$/;

export function closedSegmentName(firstSeq: number, closedAtMs: number): string {
  return `audit-${String(firstSeq).padStart(12, '0')}-${String(Math.max(0, Math.floor(closedAtMs))).padStart(13, '0')}.jsonl`;
}

export function parseSegmentName(name: string): { firstSeq: number; closedAtMs: number } | undefined {
  const m = CLOSED.exec(name);
  return m ? { firstSeq: Number(m[1]), closedAtMs: Number(m[2]) } : undefined;
}

/** The segment files of a directory listing in chain order: closed ones by first seq, the active one last. */
export function segmentOrder(names: readonly string[]): string[] {
  const closed = names.filter((n) => parseSegmentName(n)).sort();
  return names.includes(ACTIVE_SEGMENT) ? [...closed, ACTIVE_SEGMENT] : closed;
}

/**
 * Closed segments to delete: the oldest ones in chain order, for as long as `expired` says so of the time
 * each was closed (in its name, at or after its last record). Only a prefix: a segment kept after a
 * deleted one is a break the verifier reports, not a boundary, and across a wall-clock step closing
 * times need not grow with the chain (one stamped at 1970 has no known age and is kept, so every later
 * one is too). The newest closed segment may be deleted too: the active file links to it by hash,
 * which is the boundary the verifier reports. `firstKeptSeq`: the first seq of the oldest closed
 * segment kept, when one is.
 */
export function expiredPrefix(names: readonly string[], expired: (closedAtMs: number) => boolean): { deleted: string[]; firstKeptSeq?: number } {
  const deleted: string[] = [];
  for (const name of segmentOrder(names)) {
    const p = parseSegmentName(name);
    if (!p) break; // the active segment: never deleted
    if (!expired(p.closedAtMs)) return { deleted, firstKeptSeq: p.firstSeq };
    deleted.push(name);
  }
  return { deleted };
}

export interface ChainVerifyResult {
  ok: boolean;
  /** Records verified across all segments before any break. */
  verified: number;
  head: string;
  segments: number;
  /**
   * Where the kept history begins when older segments were deleted (retention): the first record of
   * the first kept file, an `audit.segment` record, and the hash of the deleted record it follows.
   * Absent when the chain starts at GENESIS (nothing deleted).
   */
  retained_from?: { file: string; seq: number; prev: string };
  broken?: { file: string; line: number; seq?: number; reason: BreakReason; detail: string };
  /** `audit.outage` records across the files (each listed one names its file). */
  outages?: OutageSummary;
}

/** Verify segment files (already in chain order, see segmentOrder) as one chain. */
export function verifyAuditSegments(files: readonly { name: string; bytes: Uint8Array | string }[]): ChainVerifyResult {
  let verified = 0;
  let from: { head: string; seq: number } | 'retained' = 'retained';
  let retained: ChainVerifyResult['retained_from'];
  let outages: OutageSummary | undefined;
  const seen = () => (outages ? { outages } : {});
  for (const f of files) {
    const r = verifyAuditText(f.bytes, from);
    verified += r.verified;
    if (r.outages) {
      const extra = r.outages.count - r.outages.first.length;
      for (const o of r.outages.first) outages = addOutage(outages, { ...o, file: f.name });
      // Outages past the file's listed ones: counted, not listed.
      if (extra > 0) {
        outages!.count += extra;
        outages!.refused += r.outages.refused - r.outages.first.reduce((n, o) => n + o.refused, 0);
      }
    }
    if (from === 'retained' && r.start && r.start.prev !== GENESIS) retained = { file: f.name, seq: r.start.seq, prev: r.start.prev };
    if (!r.ok) return { ok: false, verified, head: r.head, segments: files.length, ...(retained ? { retained_from: retained } : {}), ...seen(), broken: { file: f.name, ...r.broken! } };
    // An empty file (crash right after a rotation) adds nothing and keeps the state.
    if (r.verified > 0 || from !== 'retained') from = { head: r.head, seq: r.lastSeq };
  }
  const head = from === 'retained' ? GENESIS : from.head;
  return { ok: true, verified, head, segments: files.length, ...(retained ? { retained_from: retained } : {}), ...seen() };
}
