// The audit log writer: append-only JSON lines, hash-chained (./record.ts), secrets redacted and
// values bounded (./sanitize.ts). Synchronous on purpose: a record is on disk (fsync policy
// `record`) before the code that asked for it goes on, so "execution.started" is durable before
// the tool runs. A failed write throws (the caller refuses what it was about to do) and leaves the
// chain at its last good record; the next append first cuts the file back to that record and then
// writes, so the log recovers by itself once the disk takes writes again. What was refused meanwhile
// is counted (./outage.ts) and written as an `audit.outage` record before the first record that
// succeeds again, so the chain itself shows the outage. docs/audit.md "Failure", "Outage record".
import { parseStrictJson } from '../protocol/strict-json.ts';
import { chainRecord, recordHash, type AuditKind, type AuditRecord, type ChainHead } from './record.ts';
import { sanitizeForAudit, DEFAULT_SANITIZE_LIMITS, type SanitizeLimits } from './sanitize.ts';
import { sha256Hex } from './hash.ts';
import { WallAges } from '../kernel/wall-age.ts';
import { OutageAccount, OUTAGE_MAX_CALLS, type RefusedCall } from './outage.ts';

/** The file under the log (./node-file.ts on Node and Bun; a fake in tests). */
export interface AuditFile {
  /** Where the file is, for error messages (a path under data_dir, never a secret). Optional for fakes. */
  readonly path?: string;
  /** The last complete line (without its newline) and the bytes after it (a torn write), if any. */
  tail(): { last?: Uint8Array; torn: Uint8Array; tornAt: number };
  truncate(size: number): void;
  /** One write at the end of the file. */
  append(line: string): void;
  sync(): void;
  close(): void;
  /** The first complete line (segments: when the active segment began). Optional for fakes. */
  firstLine?(): Uint8Array | undefined;
  /** Bytes in the file now. Optional for fakes. */
  size?(): number;
}

/**
 * Segment files for retention (./segments.ts, docs/audit.md "Segments and retention"). The log
 * rotates before a record when the active segment is older than `maxAgeMs` or larger than
 * `maxBytes`, then deletes closed segments older than `retentionMs`.
 */
export interface AuditSegments {
  maxAgeMs: number;
  maxBytes: number;
  retentionMs?: number;
  /**
   * Close `file` as the segment that began at `firstSeq` and return a fresh active file, plus the
   * closed segment's name. Throws with `file` still usable when nothing was renamed.
   */
  rotate(file: AuditFile, firstSeq: number, closedAtMs: number): { file: AuditFile; closed: string };
  /**
   * Delete the oldest closed segments for as long as `expired(closed at, wall ms)` holds (a prefix of the
   * chain, ./segments.ts expiredPrefix). Their names, and the first seq of the oldest closed segment kept.
   */
  prune(expired: (closedAtMs: number) => boolean): { deleted: string[]; firstKeptSeq?: number };
  /**
   * The newest closed segment and its last complete line: an empty active file after a crash between
   * the rename and the first record continues that chain instead of restarting at GENESIS.
   */
  newestClosed?(): { name: string; firstSeq: number; last?: Uint8Array } | undefined;
}

/** Where each written record also goes (sqlite, webhook, syslog: ./mirrors.ts). Never throws into the log. */
export interface AuditSink {
  write(record: AuditRecord, line: string): void;
  /**
   * The records below seq `firstKeptSeq` are no longer in the file chain (retention): drop them too. By
   * seq, not time: across a wall-clock step the records' `ts` need not grow with the chain.
   */
  pruned?(firstKeptSeq: number): void;
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
  /**
   * Monotonic ms: with it, segment ages and retention follow the rule of src/kernel/wall-age.ts across a
   * wall-clock step (docs/boards.md "Clock"). Without it (tests of a single clock), ages are wall-clock ages.
   */
  monotonic?(): number;
  redact(s: string): string;
  fsync?: FsyncPolicy;
  limits?: SanitizeLimits;
  segments?: AuditSegments;
  sink?: AuditSink;
  /** Told once per problem that does not stop the log (rotation or pruning failed). */
  warn?(msg: string, fields?: Record<string, unknown>): void;
  /** Refused calls listed by name in an `audit.outage` record; the rest are counted (default 32). */
  outageMaxCalls?: number;
  /**
   * Opens refused while the log could not write, carried from one open to the next by the caller (one per
   * runtime): a refused open leaves its account here, and the open that succeeds writes it into the chain.
   */
  openOutage?: OpenOutage;
}

/** The account of the opens refused since the last one that succeeded (docs/audit.md "Outage record"). */
export interface OpenOutage {
  account?: OutageAccount;
}

/** A local error (./session.ts and ./gate-audit.ts turn it into the wire error, ./refusal.ts). */
export class AuditError extends Error {
  /** The file system's error code of the cause (ENOSPC, EIO, EACCES…), when it has one. */
  readonly errno?: string;
  /** The audit file concerned, when known. */
  readonly path?: string;
  constructor(
    readonly code: 'corrupt' | 'write_failed' | 'closed',
    message: string,
    options?: { cause?: unknown; path?: string },
  ) {
    super(message, options);
    this.name = 'AuditError';
    const errno = (options?.cause as { code?: unknown } | undefined)?.code;
    if (typeof errno === 'string') this.errno = errno;
    if (options?.path !== undefined) this.path = options.path;
  }
}

/** `the audit record could not be written to <path>: ENOSPC: no space left on device, write`. */
export function writeFailed(e: unknown, path: string | undefined, what = 'the audit record could not be written to'): AuditError {
  const why = e instanceof Error ? e.message : String(e);
  return new AuditError('write_failed', `${what} ${path ?? 'the audit log'}: ${why}`, { cause: e, path });
}

/** The `hash` of one complete line, or undefined when it is not a record. */
function lineHash(line: Uint8Array): string | undefined {
  const p = parseStrictJson(line, { maxBytes: 4 * 1024 * 1024, maxDepth: 64 });
  const h = p.ok ? (p.value as { hash?: unknown } | null)?.hash : undefined;
  return typeof h === 'string' ? h : undefined;
}

export class AuditLog {
  private headRef: ChainHead;
  /**
   * The last write failed: its error, and the hash of the record it tried to write (that line may be
   * on disk whole when only the fsync failed). Cleared by recover() before the next record.
   */
  private failed: { error: unknown; hash: string } | undefined;
  /** `audit.segment` data that must be the active segment's first record and is not written yet. */
  private link: Record<string, unknown> | undefined;
  /** Appends are failing, or failed and the `audit.outage` record is not written yet. */
  private outage: OutageAccount | undefined;
  private closed = false;
  private file: AuditFile;
  /** The active segment's first record (seq, wall-clock ms); undefined while it is empty. */
  private active: { seq: number; ms: number } | undefined;
  private activeBytes = 0;
  private readonly warned = new Set<string>();
  private readonly ages: WallAges;

  private constructor(
    private readonly o: AuditLogOptions,
    head: ChainHead,
  ) {
    this.headRef = head;
    this.file = o.file;
    this.ages = new WallAges({ now: o.now, monotonic: o.monotonic ?? o.now });
    if (o.segments) {
      this.activeBytes = o.file.size?.() ?? 0;
      const first = o.file.firstLine?.();
      const p = first ? parseStrictJson(first, { maxBytes: 4 * 1024 * 1024, maxDepth: 64 }) : undefined;
      const r = p?.ok ? (p.value as AuditRecord) : undefined;
      const ms = r ? Date.parse(r.ts) : NaN;
      // An unreadable first line: age the segment from now (verify reports the line itself).
      if (head) this.active = { seq: r && typeof r.seq === 'number' ? r.seq : head.seq, ms: Number.isFinite(ms) ? ms : o.now() };
    }
  }

  /**
   * Open (or create) the log and continue its chain from the last record. A torn last line (a
   * write cut short by a crash) is cut off and reported in the `audit.opened` record; a last
   * complete line that is not an intact record is corruption: refused, never papered over.
   */
  static open(o: AuditLogOptions): AuditLog {
    const { last, torn, tornAt } = o.file.tail();
    let head: ChainHead;
    const intact = (line: Uint8Array): AuditRecord => {
      const p = parseStrictJson(line, { maxBytes: 4 * 1024 * 1024, maxDepth: 64 });
      const r = p.ok ? (p.value as AuditRecord) : undefined;
      if (!r || typeof r.seq !== 'number' || typeof r.hash !== 'string' || recordHash(r) !== r.hash) {
        o.file.close();
        throw new AuditError('corrupt', `the last record of the audit log ${o.file.path ?? ''} is not intact; run \`claw audit verify\` on it and move it aside`, { path: o.file.path });
      }
      return r;
    };
    if (last) {
      const r = intact(last);
      head = { seq: r.seq, hash: r.hash };
    }
    // An active segment with no complete record but closed segments before it: continue their chain.
    let link: Record<string, unknown> | undefined;
    const closed = !last && o.segments?.newestClosed ? o.segments.newestClosed() : undefined;
    if (closed?.last) {
      const r = intact(closed.last);
      head = { seq: r.seq, hash: r.hash };
      link = { previous: { file: closed.name, first_seq: closed.firstSeq, last_seq: r.seq, head: r.hash } };
    }
    if (torn.length > 0) {
      o.file.truncate(tornAt);
      o.file.sync();
    }
    const log = new AuditLog(o, head);
    log.link = link;
    // Written (by append's writePending) before `audit.opened`, as an outage's account always precedes the first
    // record that succeeded after it.
    log.outage = o.openOutage?.account;
    try {
      log.append('audit.opened', {
        resumed: head !== undefined,
        ...(torn.length > 0 ? { torn_tail: { bytes: torn.length, sha256: sha256Hex(torn) } } : {}),
      });
    } catch (e) {
      // The open is the refused call: the session does not start (claw.initialize answers -32011).
      log.outage?.refused(o.now(), { kind: 'audit.opened', executed: false });
      if (o.openOutage) o.openOutage.account = log.outage;
      // Not opened: leave the file at its last good record (best effort: the next open cuts a torn tail anyway).
      try {
        if (log.failed) log.recover();
      } catch {
        // the next open repairs it
      }
      log.file.close();
      throw e;
    }
    if (o.openOutage) o.openOutage.account = undefined;
    log.prune();
    return log;
  }

  private warnOnce(key: string, msg: string, e: unknown): void {
    if (this.warned.has(key)) return;
    this.warned.add(key);
    this.o.warn?.(msg, { error: (e as Error)?.message ?? String(e) });
  }

  /**
   * Retention: delete expired closed segments (and their mirrored rows). Failure is told once, never thrown.
   * A segment's age is its closing stamp's by src/kernel/wall-age.ts: one this process closed minutes before
   * the wall clock stepped years forward is minutes old, not years.
   */
  private prune(): void {
    const seg = this.o.segments;
    if (!seg || seg.retentionMs === undefined) return;
    const retention = seg.retentionMs;
    const age = this.ages.ages();
    let firstKept: number | undefined;
    try {
      // No closed segment kept: the chain in the files begins with the active segment.
      firstKept = seg.prune((closedAtMs) => age(closedAtMs) > retention).firstKeptSeq ?? this.active?.seq;
    } catch (e) {
      this.warnOnce('prune', 'audit retention: deleting expired segments failed; they are kept', e);
    }
    try {
      if (firstKept !== undefined) this.o.sink?.pruned?.(firstKept);
    } catch (e) {
      this.warnOnce('sink-prune', 'audit retention: pruning the mirror failed', e);
    }
  }

  /** Before a record: start a new segment when the active one is too old or too big. */
  private maybeRotate(now: number): void {
    const seg = this.o.segments;
    if (!seg || !this.active || !this.headRef) return;
    if (this.ages.ages()(this.active.ms) < seg.maxAgeMs && this.activeBytes < seg.maxBytes) return;
    const prev = { first_seq: this.active.seq, last_seq: this.headRef.seq, head: this.headRef.hash };
    let closed: string;
    try {
      this.file.sync();
      const r = seg.rotate(this.file, this.active.seq, now);
      this.file = r.file;
      closed = r.closed;
    } catch (e) {
      // Nothing renamed: keep appending to the same file; retention waits for the next attempt.
      this.warnOnce('rotate', 'audit: starting a new segment failed; the current one grows', e);
      return;
    }
    this.active = undefined;
    this.activeBytes = 0;
    // Written by append() next, and again after a failed write until it is on disk: a segment's first
    // record must be its link, or verify cannot tell the retention boundary (docs/audit.md).
    this.link = { previous: { file: closed, ...prev } };
  }

  /**
   * After a failed write: cut the file back to the end of the last good record, so the chain on disk
   * ends at `head` again and the next record continues it. The failed write left nothing, a torn
   * line (no newline: canonical JSON has no raw newline, so a partial write never holds one), or —
   * when only the fsync failed — its whole line, recognized by its hash. Anything else after the
   * head is not ours to cut: the log stays failed (`corrupt`) and a restart refuses it, as open does.
   */
  private recover(): void {
    const f = this.failed!;
    let t: ReturnType<AuditFile['tail']>;
    try {
      t = this.file.tail();
      let cut = t.torn.length > 0 ? t.tornAt : undefined;
      if (t.last && t.torn.length === 0 && lineHash(t.last) === f.hash) cut = t.tornAt - t.last.length - 1;
      if (cut !== undefined) {
        this.file.truncate(cut);
        this.file.sync();
        t = this.file.tail();
      }
    } catch (e) {
      // Still failing (the disk is still full, or truncate is refused too): the next append tries again.
      throw writeFailed(e, this.file.path);
    }
    // With segments the head may be the newest closed segment's last record: an empty active file is right.
    const ok = t.torn.length === 0 && (t.last === undefined || (this.headRef !== undefined && lineHash(t.last) === this.headRef.hash));
    if (!ok) {
      throw new AuditError('corrupt', `the audit log ${this.file.path ?? ''} does not end at its last record; run \`claw audit verify\``, { path: this.file.path, cause: f.error });
    }
    this.failed = undefined;
  }

  get head(): ChainHead {
    return this.headRef;
  }

  /** Throws AuditError when the record is not on disk (per the fsync policy): the caller must not go on. */
  append(kind: AuditKind, data: Record<string, unknown>): AuditRecord {
    if (this.closed) throw new AuditError('closed', 'the audit log is closed');
    try {
      if (this.failed !== undefined) this.recover();
      this.maybeRotate(this.o.now());
      this.writePending();
      return this.write(kind, data);
    } catch (e) {
      // Every append the file refused (a repair refused, a write or fsync failed, corruption) is part of the outage.
      if (e instanceof AuditError) {
        this.outage ??= new OutageAccount(this.o.now(), this.o.outageMaxCalls ?? OUTAGE_MAX_CALLS);
        this.outage.failed(this.o.now(), e.errno);
      }
      throw e;
    }
  }

  /**
   * A call (or model output) was refused because an append failed: counted in the outage's account.
   * Called by the refused caller (./gate-audit.ts, ./session.ts) once per call, right after the
   * append threw; ignored when no outage is open (a refusal for another reason: the log is closed).
   */
  noteRefused(c: RefusedCall): void {
    if (this.closed || !this.outage) return;
    this.outage.refused(this.o.now(), c);
  }

  /**
   * Records owed before the next one: a new segment's link (a segment's first record must be it, or
   * verify cannot tell the retention boundary), then the account of an outage that just ended — so
   * the outage sits in the chain right before the first record that succeeded after it. A failure
   * here keeps what is owed: it is written by the next append that gets through.
   */
  private writePending(atClose = false): void {
    if (this.link) {
      this.write('audit.segment', this.link);
      this.link = undefined;
      this.prune();
    }
    if (this.outage) {
      this.write('audit.outage', this.outage.data(atClose) as unknown as Record<string, unknown>);
      this.outage = undefined;
    }
  }

  private write(kind: AuditKind, data: Record<string, unknown>): AuditRecord {
    const clean = sanitizeForAudit(data, this.o.redact, this.o.limits ?? DEFAULT_SANITIZE_LIMITS) as Record<string, unknown>;
    const now = this.o.now();
    const { record: r, line } = chainRecord(this.headRef, kind, clean, new Date(now).toISOString());
    try {
      this.file.append(`${line}\n`);
      if ((this.o.fsync ?? 'record') === 'record') this.file.sync();
    } catch (e) {
      this.failed = { error: e, hash: r.hash };
      const err = writeFailed(e, this.file.path);
      this.warnOnce('write', 'audit write failed; calls are refused until one succeeds', err);
      throw err;
    }
    this.headRef = { seq: r.seq, hash: r.hash };
    // Told once per outage: the failure when it began (warnOnce above), this when a record is on disk again.
    if (this.warned.delete('write')) this.o.warn?.('audit log writable again', { seq: r.seq, ...(kind === 'audit.outage' ? { refused: clean.refused } : {}) });
    this.active ??= { seq: r.seq, ms: now };
    // Characters, not bytes: maxBytes is a soft bound and this avoids encoding every line twice.
    this.activeBytes += line.length + 1;
    // The file is the record; a mirror is a copy, best effort (docs/audit.md "Destinations").
    if (this.o.sink) {
      try {
        this.o.sink.write(r, line);
      } catch (e) {
        this.warnOnce('sink', 'audit mirror failed; the audit file is still written', e);
      }
    }
    return r;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      // A failed last write leaves the file ending at the head, so it verifies without a restart.
      if (this.failed !== undefined) this.recover();
    } catch {
      // the next open cuts a torn tail (and notes it in audit.opened)
    }
    // Still in an outage: one last try to put its account in the chain; after this it exists nowhere.
    if (this.outage && this.failed === undefined) {
      try {
        this.writePending(true);
      } catch {
        try {
          if (this.failed !== undefined) this.recover();
        } catch {
          // as above: the next open cuts a torn tail
        }
      }
    }
    if (this.outage) {
      const d = this.outage.data(true);
      this.o.warn?.('audit outage record lost: the log could not be written before it closed', {
        since: d.since,
        until: d.until,
        refused: d.refused,
        failed_appends: d.failed_appends,
        errno: d.errno,
      });
      this.outage = undefined;
    }
    try {
      this.file.sync();
    } catch {
      // closing anyway: the records written so far were synced per the policy
    }
    this.file.close();
  }
}
