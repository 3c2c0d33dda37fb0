// One audit record and its place in the hash chain (docs/audit.md; FemtoClaw §2.5, §12, §16–17).
// A record is one JSON line: {"data":…,"hash":…,"kind":…,"prev":…,"seq":…,"ts":…,"v":1}.
// Canonical serialization (src/protocol/canonical-json.ts): object keys sorted by UTF-16 code
// units, no whitespace, strings and numbers as JSON.stringify writes them, undefined members
// dropped. `hash` = SHA-256 (lower-case hex) of the canonical serialization of the record without
// `hash`; `prev` is the previous record's hash (GENESIS for the first). The line on disk is the
// canonical serialization of the whole record, so any changed byte shows. docs/audit.md.
import { canonicalJson } from '../protocol/canonical-json.ts';
import { sha256Hex } from './hash.ts';

export const AUDIT_FORMAT_VERSION = 1;
export const GENESIS = '0'.repeat(64);

export const AUDIT_KINDS = [
  'audit.opened', // the writer (re)opened the chain; after a crash, says what torn tail it cut
  'audit.segment', // first record of a new segment file: names the closed one and its head (./segments.ts)
  'audit.outage', // appends failed for a while: what was refused meanwhile, written once writes succeed (./outage.ts)
  'protocol.received', // FemtoClaw §16: a model output arrived
  'protocol.validated', // §16: accepted (form, tool)
  'protocol.rejected', // §12: the failing step and reason
  'capability.requested', // §16: a tool call, from the agent (a validated tool_call) or an operator
  'authorization.decided', // autonomy + policy (and sandbox) decision: allow | require-approval | audit-only | deny
  'approval.requested',
  'approval.decided', // approved | denied | timeout
  'execution.started',
  'execution.finished', // outcome: ok | error (isError result) | failed (a protocol error: timeout, output blocked…)
] as const;
export type AuditKind = (typeof AUDIT_KINDS)[number];

export interface AuditRecord {
  v: number;
  seq: number;
  /** Wall-clock time of writing, ISO 8601 UTC (informative: the order is `seq`). */
  ts: string;
  kind: AuditKind;
  prev: string;
  data: Record<string, unknown>;
  hash: string;
}

export type ChainHead = { seq: number; hash: string } | undefined;

/**
 * The next record after `head` (undefined: the chain is empty) and its line. The line is built from
 * the data's canonical text once: keys in sorted order (data, hash, kind, prev, seq, ts, v), the
 * same bytes canonicalJson(record) gives (the verifier checks exactly that).
 */
export function chainRecord(head: ChainHead, kind: AuditKind, data: Record<string, unknown>, ts: string): { record: AuditRecord; line: string } {
  const seq = head ? head.seq + 1 : 0;
  const prev = head ? head.hash : GENESIS;
  const d = canonicalJson(data);
  const rest = `"kind":${JSON.stringify(kind)},"prev":"${prev}","seq":${seq},"ts":${JSON.stringify(ts)},"v":${AUDIT_FORMAT_VERSION}}`;
  const hash = sha256Hex(`{"data":${d},${rest}`);
  return { record: { v: AUDIT_FORMAT_VERSION, seq, ts, kind, prev, data, hash }, line: `{"data":${d},"hash":"${hash}",${rest}` };
}

export function recordHash(r: Omit<AuditRecord, 'hash'>): string {
  return sha256Hex(canonicalJson({ v: r.v, seq: r.seq, ts: r.ts, kind: r.kind, prev: r.prev, data: r.data }));
}
