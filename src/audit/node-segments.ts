// Segment files on the local file system (./segments.ts names them): rotation renames the active
// file (a rename within one directory is atomic), pruning unlinks whole closed segments, and
// `claw audit verify <dir>` reads them in chain order.
import { readdirSync, readFileSync, renameSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { AuditFile, AuditSegments } from './log.ts';
import { openAuditFile } from './node-file.ts';
import { ACTIVE_SEGMENT, closedSegmentName, expiredPrefix, parseSegmentName, segmentOrder } from './segments.ts';

export function nodeAuditSegments(dir: string, o: { maxAgeMs: number; maxBytes: number; retentionMs?: number }): AuditSegments {
  return {
    ...o,
    rotate(file: AuditFile, firstSeq: number, closedAtMs: number) {
      const closed = closedSegmentName(firstSeq, closedAtMs);
      // Renamed while still open: a failure here leaves `file` as it was (the log keeps using it).
      renameSync(join(dir, ACTIVE_SEGMENT), join(dir, closed));
      file.close();
      return { file: openAuditFile(join(dir, ACTIVE_SEGMENT)), closed };
    },
    newestClosed() {
      let names: string[];
      try {
        names = segmentOrder(readdirSync(dir)).filter((n) => n !== ACTIVE_SEGMENT);
      } catch {
        return undefined;
      }
      const name = names.at(-1);
      if (!name) return undefined;
      const f = openAuditFile(join(dir, name));
      try {
        return { name, firstSeq: parseSegmentName(name)!.firstSeq, last: f.tail().last?.slice() };
      } finally {
        f.close();
      }
    },
    prune(expired: (closedAtMs: number) => boolean) {
      const r = expiredPrefix(readdirSync(dir), expired);
      // Oldest first: a failure part way leaves a shorter prefix deleted, still one unbroken chain.
      for (const n of r.deleted) unlinkSync(join(dir, n));
      return r;
    },
  };
}

/** The segment files of an audit directory, in chain order, with their bytes. */
export function readAuditDirectory(dir: string): { name: string; bytes: Uint8Array }[] {
  return segmentOrder(readdirSync(dir)).map((name) => ({ name, bytes: readFileSync(join(dir, name)) }));
}
