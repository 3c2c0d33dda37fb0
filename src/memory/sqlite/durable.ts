// Durability for the journalled adapter (image-db.ts): the database lives in memory (sql.js's WebAssembly heap,
// or an in-memory bun:sqlite database on Bun); every write transaction is appended to
// a journal as one checksummed record and fsynced before it is acknowledged; now and then the whole image is
// written out as a snapshot (export()) and the journal starts over. SD cards wear per write and power gets
// pulled, so: a write costs one small append, never a rewrite of the file; a crash at any instant leaves a
// state that opens to exactly the acknowledged transactions.
//
// File layout for a database at <file> (all beside each other):
//   <file>                    current snapshot, format 2: the SQLite image deflated (zlib, level 1) + 48-byte
//                             trailer "CLAWSNP2" | id (8 random bytes) | body length u64 LE | image length u64 LE |
//                             crc32(image) u32 LE | body encoding u32 LE (1 = zlib) | crc32(trailer 0..43) u32 LE
//                             (format 1, still read: the plain image + 32-byte "CLAWSNP1" trailer). Deflated, an
//                             image is 2.5–3× smaller: fewer bytes per snapshot on the SD card.
//   <file>.prev               the snapshot before it (same format), the fallback when <file> is corrupt
//   <file>.claw-journal       journal: 24-byte header "CLAWJNL1" | base snapshot id (8) | version u32 LE (2) |
//                             crc32(header bytes 0..19) u32 LE; then records:
//                             length u32 LE | crc32(length bytes ‖ payload) u32 LE | payload
//                             payload = the statements [sql | sqlIndex, params?]… of one write transaction,
//                             binary in version 2 (format.ts encodeRecordV2), JSON in version 1 (still read);
//                             a SQL text is written once per journal and then referred to by its index;
//                             no params = exec(). The base id ties the journal to the snapshot it continues
//                             (zeros = the empty database).
//   <file>.claw-journal.prev  the journal before it: it turned <file>.prev into <file> (lets a fallback to .prev
//                             lose nothing) — or, while an automatic snapshot is compressing, it continues <file>
//   <file>.tmp, <file>.claw-journal.tmp   being written; removed on open
//   <file>.corrupt            a snapshot that failed its checksum, kept for inspection
//
// Snapshot (explicit, and at open) = export, deflate, write <file>.tmp, fsync, rename <file> → <file>.prev, rename
// <file>.tmp → <file>, fsync dir, then write a fresh journal (.tmp, fsync) and rename <file>.claw-journal → .prev,
// .tmp → <file>.claw-journal, fsync dir.
// Automatic snapshot (after a commit crosses a threshold) = export, then the journal rotation first (the new
// journal's base id is the snapshot to come), then deflate on the libuv threadpool while writes go on into the new
// journal, then the <file> steps. Until those finish the state is <file> + .prev journal + journal; a crash there
// reopens by replaying both journals and writing the unfinished snapshot between them (recover(): finishId).
// Every crash point is recognised on open by comparing journal base ids with the ids in the snapshot trailers.
//
// Replay re-executes the SQL, so writes must be deterministic: pass timestamps and random ids as parameters
// rather than calling datetime('now') or random() in a write.
import * as nodeFs from 'node:fs';
import { deflate, deflateSync } from 'node:zlib';
import { nodeCrypto } from '../../node/lazy.ts';
import { dirname } from 'node:path';
import { ClawError } from '../../protocol/errors.ts';
import { crc32 } from './crc32.ts';
import {
  BODY_ZLIB,
  EMPTY_ID,
  HEADER,
  JOURNAL_VERSION,
  encodeJournalHeader,
  encodeRecordV1,
  encodeRecordV2,
  encodeSnapshot2,
  hex,
  parseJournal,
  readSnapshot,
  snapshotId,
  type Entry,
  type JournalVersion,
  type ParsedJournal,
  type Snapshot,
} from './format.ts';
import { ImageDatabase, type ImageDb, type ImageEngine, type LoggedStatement, type WriteLog } from './image-db.ts';
import { isBun } from './shared.ts';
import type { SqlValue } from './types.ts';
import { fsyncDirBestEffort, writeFully } from '../../node/write-fully.ts';

/** The synchronous fs calls the durable layer makes; inject a wrapper to simulate ENOSPC, EIO, torn writes. */
export interface DurableFs {
  openSync(path: string, flags: string): number;
  closeSync(fd: number): void;
  writeSync(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): number;
  fsyncSync(fd: number): void;
  fdatasyncSync(fd: number): void;
  ftruncateSync(fd: number, len: number): void;
  readFileSync(path: string): Uint8Array;
  renameSync(from: string, to: string): void;
  unlinkSync(path: string): void;
  existsSync(path: string): boolean;
}

export interface DurabilityOptions {
  fs?: DurableFs;
  /** Snapshot once the journal is this many times the last snapshot's size (default 2). */
  snapshotRatio?: number;
  /** …but never for a journal smaller than this (default 1 MiB). */
  minJournalBytes?: number;
  /** …and always once the journal reaches this (default 64 MiB; bounds replay time on open). */
  maxJournalBytes?: number;
  /** Also snapshot when the journal has records and the last snapshot is older than this (default 0 = never). */
  maxSnapshotAgeMs?: number;
  /**
   * Automatic snapshots compress on the libuv threadpool (zlib.deflate) while writes go on (default). false: the
   * whole snapshot runs inside the commit that triggers it, as explicit `snapshot()` calls always do.
   */
  asyncSnapshots?: boolean;
  /** Recoverable problems found on open or while snapshotting (torn journal tail, corrupt snapshot, ENOSPC). */
  onWarning?: (w: ClawError) => void;
  /**
   * Monotonic ms for maxSnapshotAgeMs (default performance.now()): a wall clock set back would hold off the
   * age-triggered snapshot for as long as it went back (docs/boards.md "Clock").
   */
  now?: () => number;
}

export interface DurableStats {
  /** Bytes appended to journals (headers included) since open. */
  journalBytesWritten: number;
  /** Bytes of snapshot files written since open. */
  snapshotBytesWritten: number;
  snapshots: number;
  /** Current journal size in bytes. */
  journalSize: number;
  lastSnapshotSize: number;
}

export interface RecoveryReport {
  source: 'empty' | 'snapshot' | 'previous-snapshot';
  recordsReplayed: number;
  /** Bytes dropped from the journal's tail (a torn last record). */
  journalBytesDropped: number;
  warnings: ClawError[];
}

export interface DurableControl {
  /** Writes a snapshot now and starts a new journal. */
  snapshot(): void;
  /** Resolves when no automatic snapshot is being compressed or written. */
  settled(): Promise<void>;
  readonly stats: DurableStats;
  readonly recovery: RecoveryReport;
  readonly files: { snapshot: string; previous: string; journal: string; previousJournal: string };
}

export type DurableDatabase = ImageDatabase & { readonly durable: DurableControl };

/** A new file with `data`, fsynced and closed; on any failure it is removed again and the error thrown. */
function writeSynced(fs: DurableFs, path: string, data: Uint8Array): void {
  try {
    const fd = fs.openSync(path, 'w');
    try {
      writeFully(fs, fd, data, 0);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch (e) {
    tryUnlink(fs, path);
    throw e;
  }
}

function tryUnlink(fs: DurableFs, p: string): void {
  try {
    fs.unlinkSync(p);
  } catch {
    // absent
  }
}

/** The journal writer and snapshotter behind one journalled database. */
class DurableLog implements WriteLog, DurableControl {
  db!: ImageDatabase;
  fd = -1;
  /** SQL texts already written to the current journal → index. */
  private sqlIndex = new Map<string, number>();
  /** Payload format of the journal being appended to: a v1 journal continued after an upgrade stays v1. */
  private version: JournalVersion = JOURNAL_VERSION;
  private lastAppend?: { mark: number; newSql: string[] };
  /** Set when the on-disk state no longer matches what appends would assume; writes refuse until reopen. */
  private broken?: ClawError;
  private nextSnapshotCheck = 0;
  lastSnapshotAt: number;
  readonly stats: DurableStats = { journalBytesWritten: 0, snapshotBytesWritten: 0, snapshots: 0, journalSize: 0, lastSnapshotSize: 0 };
  /** An automatic snapshot whose image is being compressed: the journal already restarted on its id. */
  private pending?: Promise<void>;
  /** Its image and id, for close(), which writes it rather than leave the next open to. */
  private pendingJob?: { image: Uint8Array; id: string };
  /**
   * The journal continues a snapshot whose file is not written yet (compressing, or it failed): the state is
   * <file> + <journal>.prev + <journal>. The next snapshot must then be written before rotating again.
   */
  private unfolded = false;
  private rotating = false;
  private closed = false;
  /** Bumped by every synchronous snapshot: an automatic one still compressing is then stale and not written. */
  private generation = 0;
  recovery!: RecoveryReport;
  readonly files;
  private readonly fs: DurableFs;
  private readonly now: () => number;

  constructor(
    readonly path: string,
    private readonly opts: DurabilityOptions,
  ) {
    this.fs = opts.fs ?? (nodeFs as unknown as DurableFs);
    this.now = opts.now ?? (() => performance.now());
    this.lastSnapshotAt = this.now();
    this.files = { snapshot: path, previous: `${path}.prev`, journal: `${path}.claw-journal`, previousJournal: `${path}.claw-journal.prev` };
  }

  warn(w: ClawError): void {
    this.recovery?.warnings.push(w);
    this.opts.onWarning?.(w);
  }

  // ---- WriteLog ----

  append(stmts: LoggedStatement[]): number {
    if (this.broken) throw this.broken;
    const newSql: string[] = [];
    const entries: Entry[] = stmts.map((s) => {
      let ref: string | number | undefined = this.sqlIndex.get(s.sql);
      if (ref === undefined) {
        ref = s.sql;
        this.sqlIndex.set(s.sql, this.sqlIndex.size);
        newSql.push(s.sql);
      }
      return s.params === undefined ? [ref] : [ref, s.params];
    });
    const payload = this.version === 1 ? encodeRecordV1(entries) : encodeRecordV2(entries);
    const rec = new Uint8Array(8 + payload.length);
    const dv = new DataView(rec.buffer);
    dv.setUint32(0, payload.length, true);
    dv.setUint32(4, crc32(payload, crc32(rec.subarray(0, 4))), true);
    rec.set(payload, 8);
    const mark = this.stats.journalSize;
    try {
      writeFully(this.fs, this.fd, rec, mark);
      this.fs.fdatasyncSync(this.fd);
    } catch (e) {
      for (const s of newSql) this.sqlIndex.delete(s);
      this.cutBack(mark, e);
      throw new ClawError('sqlite.journal_write', `journal write to ${this.files.journal} failed: ${(e as Error).message}`, { cause: e });
    }
    this.stats.journalSize += rec.length;
    this.stats.journalBytesWritten += rec.length;
    this.lastAppend = { mark, newSql };
    return mark;
  }

  undo(mark: number): void {
    if (this.lastAppend?.mark === mark) for (const s of this.lastAppend.newSql) this.sqlIndex.delete(s);
    this.cutBack(mark, undefined);
    this.stats.journalSize = mark;
  }

  /** Removes a partial or unwanted record; if even that fails the journal can't be trusted for appends. */
  private cutBack(mark: number, cause: unknown): void {
    try {
      this.fs.ftruncateSync(this.fd, mark);
      this.fs.fdatasyncSync(this.fd);
    } catch (e) {
      // Whatever tail is left will fail its checksum or be a record we never acknowledged; on reopen it is
      // dropped. Until then we cannot know where the next record would start.
      this.broken = new ClawError('sqlite.journal_broken', `journal ${this.files.journal} could not be repaired after a failed write; reopen the database`, { cause: cause ?? e });
    }
  }

  afterCommit(): void {
    const o = this.opts;
    const size = this.stats.journalSize;
    if (size <= HEADER || size < this.nextSnapshotCheck) return;
    const min = o.minJournalBytes ?? 1 << 20;
    const max = o.maxJournalBytes ?? 64 << 20;
    const ratio = o.snapshotRatio ?? 2;
    const aged = (o.maxSnapshotAgeMs ?? 0) > 0 && this.now() - this.lastSnapshotAt >= o.maxSnapshotAgeMs!;
    if (!(size >= max || size >= Math.max(min, ratio * this.stats.lastSnapshotSize) || aged)) return;
    // One automatic snapshot at a time. If its compression cannot deliver (an event loop kept busy by synchronous
    // writes) and the journal reaches max_journal_bytes meanwhile, a synchronous one supersedes it: replay stays bounded.
    if (this.pending && size < max) return;
    try {
      if (o.asyncSnapshots === false || this.unfolded || this.pending) this.snapshot();
      else this.beginSnapshot();
    } catch (e) {
      // The acknowledged write is already safe in the journal; a failed snapshot only postpones compaction.
      this.nextSnapshotCheck = size + Math.max(min, 64 << 10);
      this.warn(e instanceof ClawError ? e : new ClawError('sqlite.snapshot_failed', `snapshot of ${this.path} failed: ${(e as Error).message}`, { cause: e }));
    }
  }

  // ---- snapshots ----

  /**
   * Synchronous snapshot: export, deflate, write <file> (tmp + fsync + rename, the old one kept as .prev), then
   * restart the journal on the new id (the old journal kept as .prev).
   */
  snapshot(): void {
    if (this.broken) throw this.broken;
    // An automatic snapshot still compressing is written first (synchronously), so the state on disk is the usual
    // <file> + journal before this one starts: a crash between this snapshot's renames then leaves a layout
    // recover() knows, and the .prev fallback chain stays whole.
    this.finishPendingNow();
    const id = hex(nodeCrypto().randomBytes(8));
    const image = this.db.raw.export();
    this.writeSnapshotFile(image, deflateSync(image, { level: 1 }), id);
    try {
      this.startJournal(id, true);
    } catch (e) {
      this.broken = new ClawError('sqlite.journal_broken', `snapshot ${this.files.snapshot} written but a new journal could not be started: ${(e as Error).message}; reopen the database`, { cause: e });
      throw this.broken;
    }
    this.unfolded = false;
    this.stats.snapshots++;
    this.lastSnapshotAt = this.now();
    this.nextSnapshotCheck = 0;
  }

  /**
   * Automatic snapshot without blocking on compression: export the image (synchronous, a consistent state), restart
   * the journal on the new id right away (the old journal becomes .prev: <file> + .prev journal + new journal is
   * the whole state, which recover() understands), and deflate on the libuv threadpool. When the body is ready it
   * is written as <file> like any snapshot. Writes meanwhile go to the new journal; nothing waits.
   */
  private beginSnapshot(): void {
    if (this.broken) throw this.broken;
    const id = hex(nodeCrypto().randomBytes(8));
    const image = this.db.raw.export();
    try {
      this.startJournal(id, true);
    } catch (e) {
      if (this.rotating)
        this.broken = new ClawError('sqlite.journal_broken', `journal ${this.files.journal} could not be restarted for a snapshot: ${(e as Error).message}; reopen the database`, { cause: e });
      throw e;
    }
    this.unfolded = true;
    this.stats.snapshots++;
    this.lastSnapshotAt = this.now();
    this.nextSnapshotCheck = 0;
    const generation = this.generation;
    this.pendingJob = { image, id };
    this.pending = new Promise<void>((resolve) => {
      // zlib hands each full output chunk back to the main thread before going on: with the default 16 KiB that is
      // one event-loop turn per 16 KiB of body (measured: 23 store calls for a 2.3 MB image). An output buffer of
      // half the image (level 1 deflates these images 2.5–3×) makes it one or two.
      deflate(image, { level: 1, chunkSize: Math.max(64 << 10, image.length >> 1) }, (err, body) => {
        if (generation === this.generation) (this.pending = undefined), (this.pendingJob = undefined);
        try {
          // Closed: the files on disk are a state recover() completes. A synchronous snapshot since: it holds more.
          if (this.closed || this.broken || generation !== this.generation) return;
          if (err) throw err;
          this.writeSnapshotFile(image, body, id);
          this.unfolded = false;
        } catch (e) {
          // Nothing acknowledged is at risk (the journals hold it); retry later, as the sync path does.
          this.nextSnapshotCheck = this.stats.journalSize + Math.max(this.opts.minJournalBytes ?? 1 << 20, 64 << 10);
          this.warn(e instanceof ClawError ? e : new ClawError('sqlite.snapshot_failed', `snapshot of ${this.path} failed: ${(e as Error).message}`, { cause: e }));
        } finally {
          resolve();
        }
      });
    });
  }

  settled(): Promise<void> {
    return this.pending ?? Promise.resolve();
  }

  /** Writes <file>.tmp (body + trailer), fsyncs it, keeps <file> as .prev and renames the tmp into place. */
  private writeSnapshotFile(image: Uint8Array, body: Uint8Array, id: string): void {
    const { fs, files } = this;
    const tmp = `${this.path}.tmp`;
    const data = encodeSnapshot2(body, { length: image.length, crc: crc32(image) }, id, BODY_ZLIB);
    try {
      writeSynced(fs, tmp, data);
    } catch (e) {
      throw new ClawError('sqlite.snapshot_failed', `snapshot ${tmp} could not be written: ${(e as Error).message}`, { cause: e });
    }
    this.stats.snapshotBytesWritten += data.length;
    // A crash between the renames leaves .prev and no <file>: recover() falls back to .prev and its journals.
    if (fs.existsSync(files.snapshot)) fs.renameSync(files.snapshot, files.previous);
    fs.renameSync(tmp, files.snapshot);
    fsyncDirBestEffort(fs, dirname(this.path));
    this.stats.lastSnapshotSize = data.length;
  }

  /** Writes a fresh journal for `baseId` atomically (tmp + rename), keeping the old one as .prev when asked. */
  startJournal(baseId: string, keepOld: boolean): void {
    const { fs, files } = this;
    const tmp = `${files.journal}.tmp`;
    const header = encodeJournalHeader(baseId);
    writeSynced(fs, tmp, header); // on failure nothing else changed: the current journal carries on
    if (keepOld && fs.existsSync(files.journal)) fs.renameSync(files.journal, files.previousJournal);
    this.rotating = true; // from here a failure leaves our descriptor on a file that is no longer <journal>
    fs.renameSync(tmp, files.journal);
    fsyncDirBestEffort(fs, dirname(this.path));
    this.stats.journalBytesWritten += HEADER;
    this.openJournal(HEADER, new Map(), JOURNAL_VERSION);
    this.rotating = false;
  }

  openJournal(size: number, sqlIndex: Map<string, number>, version: JournalVersion): void {
    if (this.fd >= 0) this.fs.closeSync(this.fd);
    this.fd = -1; // if the open below fails, close() must not close the old descriptor a second time
    this.fd = this.fs.openSync(this.files.journal, 'r+');
    this.stats.journalSize = size;
    this.sqlIndex = sqlIndex;
    this.version = version;
  }

  /**
   * An automatic snapshot still compressing is written now, synchronously, and no longer by its callback. Used
   * when closing (a stop, not a request) and before a synchronous snapshot, so either leaves the usual <file> +
   * journal with the full .prev fallback chain rather than a state to complete. A failure is a warning: the
   * journals still hold everything (recover() completes the state).
   */
  private finishPendingNow(): void {
    const job = this.pendingJob;
    this.generation++; // the callback, when it comes, writes nothing
    this.pending = this.pendingJob = undefined;
    if (!job || this.closed || this.broken) return;
    try {
      this.writeSnapshotFile(job.image, deflateSync(job.image, { level: 1 }), job.id);
      this.unfolded = false;
    } catch (e) {
      this.warn(e instanceof ClawError ? e : new ClawError('sqlite.snapshot_failed', `snapshot of ${this.path} failed: ${(e as Error).message}`, { cause: e }));
    }
  }

  closeFiles(): void {
    this.finishPendingNow();
    this.closed = true;
    if (this.fd >= 0) this.fs.closeSync(this.fd);
    this.fd = -1;
  }

  // ---- open ----

  readJournal(path: string): ParsedJournal | undefined {
    if (!this.fs.existsSync(path)) return undefined;
    return parseJournal(this.fs.readFileSync(path), path);
  }

  /**
   * Works out which snapshot and journals make up the acknowledged state (see the layout above), loads it and
   * returns what to do with the journal next.
   */
  async recover(wasmPath?: string, engineChoice: EngineChoice = 'sql.js'): Promise<void> {
    const { fs, files } = this;
    tryUnlink(fs, `${this.path}.tmp`);
    tryUnlink(fs, `${files.journal}.tmp`);
    const warnings: ClawError[] = [];
    this.recovery = { source: 'empty', recordsReplayed: 0, journalBytesDropped: 0, warnings };
    const journal = this.readJournal(files.journal);
    const orphan = (j: ParsedJournal) =>
      new ClawError('sqlite.journal_orphan', `journal ${files.journal} continues snapshot ${j.baseId}, which is neither ${files.snapshot} nor ${files.previous}; refusing to guess (move it away to open without it)`);

    let base: Snapshot | undefined;
    let chain: ParsedJournal[] = [];
    let resnapshot = false;
    let staleJournal = false;
    /** An automatic snapshot was cut short after the journal restarted on this id: write it during replay. */
    let finishId: string | undefined;
    const prevJournal = this.readJournal(files.previousJournal);
    let main: Snapshot | undefined;
    let mainError: ClawError | undefined;
    try {
      main = readSnapshot(fs, files.snapshot);
      if (main.id === null && journal) {
        // Our journal beside a trailer-less file: the snapshot lost its tail rather than being a plain file.
        main = undefined;
        throw new ClawError('sqlite.snapshot_corrupt', `corrupt snapshot ${files.snapshot}: no snapshot trailer, yet a journal exists`);
      }
    } catch (e) {
      mainError = e as ClawError;
      if (mainError.code === 'sqlite.snapshot_unreadable') throw mainError;
    }

    if (main) {
      base = main;
      this.recovery.source = 'snapshot';
      if (main.id === null) {
        // A plain SQLite file (native adapter, or copied in, no journal beside it): adopt it.
        resnapshot = true;
      } else if (journal) {
        if (journal.baseId === main.id) chain = [journal];
        else if (fs.existsSync(files.previous) && snapshotId(fs, files.previous) === journal.baseId) staleJournal = true;
        // The very first snapshot: crash after <file> was renamed into place, before the journal rotated. The
        // journal continues the empty database, which <file> already holds (there is no .prev to compare with).
        else if (journal.baseId === EMPTY_ID && !fs.existsSync(files.previous)) staleJournal = true;
        // An automatic snapshot restarted the journal (the old one is .prev, continuing <file>) and was killed
        // before its compressed file was written: <file> + .prev journal + journal, and the snapshot is finished.
        else if (prevJournal && prevJournal.baseId === main.id) (chain = [prevJournal, journal]), (finishId = journal.baseId);
        // A synchronous snapshot written over a cut-short automatic one (whose compressed file never came) and
        // killed before its journal rotated: <file> holds everything, .prev is what the .prev journal continues.
        else if (prevJournal && fs.existsSync(files.previous) && snapshotId(fs, files.previous) === prevJournal.baseId) staleJournal = true;
        else throw orphan(journal);
      } else if (prevJournal && prevJournal.baseId === main.id) {
        // Killed between the journal renames of that restart: the .prev journal is all there is.
        chain = [prevJournal];
        resnapshot = true;
      }
    } else if (mainError!.code === 'sqlite.snapshot_missing' && !fs.existsSync(files.previous)) {
      if (prevJournal && prevJournal.baseId === EMPTY_ID && (!journal || journal.baseId !== EMPTY_ID)) {
        // The same cut-short automatic snapshot, the very first one (no <file> yet).
        chain = journal ? [prevJournal, journal] : [prevJournal];
        if (journal) finishId = journal.baseId;
        else resnapshot = true;
      } else {
        if (journal && journal.baseId !== EMPTY_ID) throw orphan(journal);
        if (journal) chain = [journal];
      }
    } else {
      // <file> corrupt, or missing while .prev exists (crash between the two renames of a snapshot).
      if (mainError!.code === 'sqlite.snapshot_corrupt') warnings.push(mainError!), this.opts.onWarning?.(mainError!);
      let prev: Snapshot;
      try {
        prev = readSnapshot(fs, files.previous);
      } catch (e) {
        throw new ClawError('sqlite.snapshot_corrupt', `${mainError!.message}; previous snapshot unusable too (${(e as Error).message})`, { cause: e });
      }
      base = prev;
      this.recovery.source = 'previous-snapshot';
      if (journal && journal.baseId === prev.id) chain = [journal];
      else if (prevJournal && prevJournal.baseId === prev.id) chain = journal ? [prevJournal, journal] : [prevJournal];
      else if (!journal && !prevJournal) chain = [];
      else throw new ClawError('sqlite.snapshot_corrupt', `${mainError!.message}; no journal continues ${files.previous}, so falling back would lose writes`, { cause: mainError });
      if (mainError!.code === 'sqlite.snapshot_corrupt') fs.renameSync(files.snapshot, `${this.path}.corrupt`);
      resnapshot = true;
    }

    const { raw, engine } = await openImage(engineChoice, base?.image, wasmPath);
    this.db = new ImageDatabase(raw, engine, this, () => this.closeFiles());
    if (base) {
      try {
        raw.exec('PRAGMA schema_version');
      } catch (e) {
        throw new ClawError('sqlite.snapshot_corrupt', `snapshot ${this.recovery.source === 'snapshot' ? files.snapshot : files.previous} is not a usable SQLite image: ${String(e)}`, { cause: e });
      }
    }
    this.stats.lastSnapshotSize = base ? base.fileSize : 0;

    // Replay: one transaction per record, nothing logged again.
    this.db.replaying = true;
    try {
      for (const j of chain) {
        if (j === journal && finishId !== undefined) this.finishSnapshot(finishId);
        this.replay(j);
      }
    } finally {
      this.db.replaying = false;
    }

    const last = chain[chain.length - 1];
    if (last && last.goodEnd < last.size) {
      const path = last === journal ? files.journal : files.previousJournal;
      this.recovery.journalBytesDropped = last.size - last.goodEnd;
      this.warn(new ClawError('sqlite.journal_torn', `dropped a torn record (${last.size - last.goodEnd} bytes) at the end of ${path}`));
      if (last === journal) {
        const fd = fs.openSync(files.journal, 'r+');
        try {
          fs.ftruncateSync(fd, last.goodEnd);
          fs.fsyncSync(fd);
        } finally {
          fs.closeSync(fd);
        }
      }
    }

    if (resnapshot) {
      this.snapshot();
    } else if (journal && !staleJournal) {
      // Continue the journal: rebuild its SQL index from the records replayed.
      const index = new Map<string, number>();
      for (const rec of journal.records) for (const [ref] of rec) if (typeof ref === 'string') index.set(ref, index.size);
      this.openJournal(journal.goodEnd, index, journal.version);
    } else {
      // No journal yet, or one already folded into <file> (crash after the snapshot rename).
      this.startJournal(base?.id ?? EMPTY_ID, staleJournal);
    }
    // A journal that changed the schema is folded into a snapshot now: replaying DDL costs far more than its bytes
    // suggest (SQLite's schema and virtual-table code, on sql.js compiled afresh by V8 at every start: ~45 ms of CPU
    // for the memory stores' schema on the baseline compiler, BENCH.md "Level 3 agent"), while the snapshot of a
    // young database is a few KB written once; the byte thresholds would never fire for a small agent. A failure
    // is a warning, as for any snapshot: the journal is still there.
    if (!resnapshot && chain.some(changedSchema)) {
      try {
        this.snapshot();
      } catch (e) {
        this.warn(e instanceof ClawError ? e : new ClawError('sqlite.snapshot_failed', `snapshot of ${this.path} failed: ${(e as Error).message}`, { cause: e }));
      }
    }
  }

  /** Writes the snapshot an interrupted automatic one was making (the state replayed so far), keeping <file> as .prev. */
  private finishSnapshot(id: string): void {
    const image = this.db.raw.export();
    try {
      this.writeSnapshotFile(image, deflateSync(image, { level: 1 }), id);
    } catch (e) {
      // Still the <file> + .prev journal + journal state, which opens again; the next snapshot is written first.
      this.unfolded = true;
      this.warn(e instanceof ClawError ? e : new ClawError('sqlite.snapshot_failed', `snapshot of ${this.path} failed: ${(e as Error).message}`, { cause: e }));
    }
  }

  private replay(j: ParsedJournal): void {
    const sqls: string[] = [];
    for (const rec of j.records) {
      this.db.transaction(() => {
        for (const [ref, params] of rec) {
          const sql = typeof ref === 'string' ? ref : sqls[ref];
          if (typeof ref === 'string') sqls.push(ref);
          if (sql === undefined) throw new ClawError('sqlite.journal_corrupt', `journal record refers to unknown SQL #${ref}`);
          if (params === undefined) this.db.exec(sql);
          else this.db.prepare(sql).run(...params);
        }
      });
      this.recovery.recordsReplayed++;
    }
  }
}

const DDL = /^\s*(create|drop|alter)\b/i;
/** Whether a journal holds a statement that changed the schema (every SQL text appears once as a string). */
const changedSchema = (j: ParsedJournal): boolean => j.records.some((rec) => rec.some(([ref]) => typeof ref === 'string' && DDL.test(ref)));

/**
 * Which engine holds the image: `'auto'` bun:sqlite where the runtime has it (bun-image.ts), else sql.js;
 * `'sql.js'` always sql.js (`adapter: sqljs` asked for by name).
 */
export type EngineChoice = 'auto' | 'sql.js';

async function openImage(choice: EngineChoice, image: Uint8Array | undefined, wasmPath?: string): Promise<{ raw: ImageDb; engine: ImageEngine }> {
  // Not on Bun, the bun:sqlite engine's chunk is not even loaded.
  if (choice === 'auto' && isBun()) {
    const { openBunImageRaw } = await import('./bun-image.ts');
    const raw = await openBunImageRaw(image);
    if (raw) return { raw, engine: 'bun:sqlite' };
  }
  const { openSqlJsRaw } = await import('./sqljs.ts');
  return { raw: await openSqlJsRaw({ wasmPath, image }), engine: 'sql.js' };
}

/** Opens (creating if needed) a durable journalled database at `path`. */
export async function openDurable(path: string, opts: DurabilityOptions = {}, wasmPath?: string, engine: EngineChoice = 'sql.js'): Promise<DurableDatabase> {
  const log = new DurableLog(path, opts);
  await log.recover(wasmPath, engine);
  const db = log.db as DurableDatabase;
  Object.defineProperty(db, 'durable', { value: log, enumerable: false });
  return db;
}

export type { SqlValue };
