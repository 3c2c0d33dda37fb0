// The audit log writer: append-only JSON lines, hash-chained (./record.ts), secrets redacted and
// values bounded (./sanitize.ts). Synchronous on purpose: a record is on disk (fsync policy
// `record`) before the code that asked for it goes on, so "execution.started" is durable before
// the tool runs. A failed write poisons the log: every later append throws, so nothing executes
// unrecorded, until the log is reopened (which repairs a torn tail). docs/audit.md.
import { parseStrictJson } from '../femtoclaw/strict-json.ts';
import { chainRecord, recordHash, type AuditKind, type AuditRecord, type ChainHead } from './record.ts';
import { sanitizeForAudit, DEFAULT_SANITIZE_LIMITS, type SanitizeLimits } from './sanitize.ts';
import { sha256Hex } from './hash.ts';

/** The file under the log (./node-file.ts on Node and Bun; a fake in tests). */
export interface AuditFile {
  /** The last complete line (without its newline) and the bytes after it (a torn write), if any. */
  tail(): { last?: Uint8Array; torn: Uint8Array; tornAt: number };
  truncate(size: number): void;
  /** One write at the end of the file. */
  append(line: string): void;
  sync(): void;
  close(): void;
}

/**
 * `record`: fsync after every record (the default; what audit is for). `none`: leave flushing to
 * the OS — fewer writes on SD cards, at the price of losing the last records in a power cut
 * (never of breaking the chain: a torn tail is cut on reopen and noted).
 */
export type FsyncPolicy = 'record' | 'none';

export interface AuditLogOptions {
  file: AuditFile;
  /** Wall clock, ms since the epoch. */
  now(): number;
  redact(s: string): string;
  fsync?: FsyncPolicy;
  limits?: SanitizeLimits;
}

export class AuditError extends Error {
  constructor(
    readonly code: 'corrupt' | 'write_failed' | 'closed',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'AuditError';
  }
}

export class AuditLog {
  private headRef: ChainHead;
  private failed: unknown;
  private closed = false;

  private constructor(
    private readonly o: AuditLogOptions,
    head: ChainHead,
  ) {
    this.headRef = head;
  }

  /**
   * Open (or create) the log and continue its chain from the last record. A torn last line (a
   * write cut short by a crash) is cut off and reported in the `audit.opened` record; a last
   * complete line that is not an intact record is corruption: refused, never papered over.
   */
  static open(o: AuditLogOptions): AuditLog {
    const { last, torn, tornAt } = o.file.tail();
    let head: ChainHead;
    if (last) {
      const p = parseStrictJson(last, { maxBytes: 4 * 1024 * 1024, maxDepth: 64 });
      const r = p.ok ? (p.value as AuditRecord) : undefined;
      if (!r || typeof r.seq !== 'number' || typeof r.hash !== 'string' || recordHash(r) !== r.hash) {
        o.file.close();
        throw new AuditError('corrupt', 'the last record of the audit log is not intact; run `claw audit verify` on it and move it aside');
      }
      head = { seq: r.seq, hash: r.hash };
    }
    if (torn.length > 0) {
      o.file.truncate(tornAt);
      o.file.sync();
    }
    const log = new AuditLog(o, head);
    log.append('audit.opened', {
      resumed: head !== undefined,
      ...(torn.length > 0 ? { torn_tail: { bytes: torn.length, sha256: sha256Hex(torn) } } : {}),
    });
    return log;
  }

  get head(): ChainHead {
    return this.headRef;
  }

  append(kind: AuditKind, data: Record<string, unknown>): AuditRecord {
    if (this.closed) throw new AuditError('closed', 'the audit log is closed');
    if (this.failed !== undefined) throw new AuditError('write_failed', 'an earlier audit write failed; nothing more is recorded until the log is reopened', { cause: this.failed });
    const clean = sanitizeForAudit(data, this.o.redact, this.o.limits ?? DEFAULT_SANITIZE_LIMITS) as Record<string, unknown>;
    const { record: r, line } = chainRecord(this.headRef, kind, clean, new Date(this.o.now()).toISOString());
    try {
      this.o.file.append(`${line}\n`);
      if ((this.o.fsync ?? 'record') === 'record') this.o.file.sync();
    } catch (e) {
      this.failed = e;
      throw new AuditError('write_failed', `audit write failed: ${(e as Error).message}`, { cause: e });
    }
    this.headRef = { seq: r.seq, hash: r.hash };
    return r;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.o.file.sync();
    } catch {
      // closing anyway: the records written so far were synced per the policy
    }
    this.o.file.close();
  }
}
