// The agent's request journal (docs/transports.md, MQTT "Delivery"): a request is appended here before its
// PUBACK goes out (mqtt.js emits 'message' synchronously before acknowledging), and its reply before the reply
// is published. On start, requests with no reply are delivered again (the agent crashed between the
// acknowledgement and the answer: at least once), and stored replies within the window answer redeliveries
// and retries (request_id dedup across restarts). Without it, an acknowledged request is lost with the process.
//
// File: JSON lines, {dataDir}/mqtt/{client_id}.journal. Appends are synchronous (they survive kill -9);
// fsync (power loss) is opt-in, it costs a disk flush per message. Rewritten (tmp + rename) with only the
// live records at start and every `compactEvery` appends.
//
// A full disk (ENOSPC) or an I/O error must not cost records already in the file, nor the agent's start:
// - An append writes its whole line or nothing: partial writes are continued, and on failure the file is cut
//   back to the end of the last whole record (a torn line would swallow the next record with it: both unparsable
//   at load, an acknowledged request lost). If even the cut fails, the next record starts with a newline of its
//   own, so only the failed line is unreadable. The failure is thrown, naming the file; the record stays in memory
//   and the next append that works is followed by a rewrite, which writes it out.
// - Until then the file lags memory: a reply's `done` that failed leaves the request open in the file, and a
//   crash would answer it `interrupted` at the next start although its reply went out (two answers, the second
//   wrong). So a record that could not be written is kept as unwritten (the newest per key supersedes an older
//   one) and appended again by flush() (the transport's retry timer), after the next append that works, and by
//   any rewrite that works. Appending only those records needs their bytes alone, where a rewrite needs room for
//   the whole journal once more. At most MAX_UNWRITTEN are kept; past that only a rewrite can catch up.
// - A rewrite writes a temp file and renames it over the journal only once it is complete; when it fails the temp
//   file is removed and the existing journal stays in use (what it holds is still true, superseded records
//   only cost space), so a full disk at start does not keep the agent from starting. Such failures go to load()'s `warn`, never thrown.
import * as nodeFs from 'node:fs';
import { ClawError } from '../../protocol/errors.ts';
import { fsyncDirBestEffort, writeFully } from '../../node/write-fully.ts';
import type { InboundRequest } from './envelope.ts';

export interface JournalRequest {
  /** request_id, or a generated key for a request without one (replayed, never deduplicated). */
  k: string;
  at: number;
  req: InboundRequest;
}
export interface JournalDone {
  k: string;
  at: number;
  replies: string[];
}

export interface RequestJournal {
  /** The journal's path, for log lines. */
  readonly file?: string;
  /**
   * Live records: requests without a reply, and replies younger than `windowMs`. Rewrites the file; a rewrite that
   * fails (now or at a later compaction) keeps the existing file in use and is reported to `warn`. Throws, naming
   * the file, only when the existing journal cannot be read.
   */
  load(now: number, windowMs: number, warn?: (e: ClawError) => void): { pending: JournalRequest[]; done: JournalDone[] };
  /** Throws a ClawError naming the file when the record could not be written (the file holds no part of it). */
  request(r: JournalRequest): void;
  /** As request(). */
  done(d: JournalDone): void;
  /**
   * Writes the records that failed earlier (unwritten()), oldest first, stopping at the first that fails again:
   * throws a ClawError naming the file then. A no-op when nothing lags.
   */
  flush(): void;
  /**
   * What the file lacks: keys whose latest record is not in it (a crash now answers an open one `interrupted`);
   * `overflow` when more failed than are kept (MAX_UNWRITTEN), so only a rewrite catches up.
   */
  unwritten(): { keys: string[]; overflow: boolean };
  /** Closes the file; records still unwritten are not tried again (flush() first). */
  close(): void;
}

/** The synchronous fs calls the journal makes; inject a wrapper to simulate ENOSPC, EIO, short writes. */
export interface JournalFs {
  openSync(path: string, flags: string): number;
  closeSync(fd: number): void;
  writeSync(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): number;
  fsyncSync(fd: number): void;
  ftruncateSync(fd: number, len: number): void;
  readFileSync(path: string): Uint8Array;
  renameSync(from: string, to: string): void;
  unlinkSync(path: string): void;
  existsSync(path: string): boolean;
  mkdirSync(path: string, opts: { recursive: true }): unknown;
}

const NL = 0x0a;
/** Unwritten records kept for flush(): bounded, like the reply cache (dedup.ts) the journal backs. */
export const MAX_UNWRITTEN = 10_000;

export function createFileJournal(
  dir: string,
  clientId: string,
  opts: {
    fsync?: boolean;
    compactEvery?: number;
    windowMs: number;
    now: () => number;
    /**
     * The ages of the records' wall stamps (kernel/wall-age.ts WallAges.ages): a step of the wall clock (NTP on a
     * board without RTC) then neither drops a reply still inside its window nor keeps an old one. Default: `now - at`.
     */
    ages?: () => (stampMs: number) => number;
    fs?: JournalFs;
  },
): RequestJournal {
  const fs = opts.fs ?? (nodeFs as unknown as JournalFs);
  const folder = `${dir.replace(/\/$/, '')}/mqtt`;
  const file = `${folder}/${clientId.replace(/[^A-Za-z0-9_.-]/g, '_')}.journal`;
  const every = opts.compactEvery ?? 2000;
  let fd: number | undefined;
  let state: 'unloaded' | 'open' | 'closed' = 'unloaded';
  // `good`: end of the last whole record. `end`: bytes in the file, past `good` only while a failed write's
  // tail could not be cut off.
  let good = 0;
  let end = 0;
  let appends = 0;
  let warn: (e: ClawError) => void = () => {};
  const pending = new Map<string, JournalRequest>();
  const done = new Map<string, JournalDone>();
  // Records that failed, newest per key, in the order they failed; `overflow` once more failed than are kept.
  type Rec = { t: 'req' | 'done'; k: string };
  const unwritten = new Map<string, Rec>();
  let overflow = false;

  const message = (e: unknown) => (e as Error).message;
  const tryClose = (f: number) => {
    try {
      fs.closeSync(f);
    } catch {
      // nothing left to do with it
    }
  };

  /** Removes a failed write's bytes; false when it cannot (the file then ends in an unterminated fragment). */
  const cutBack = (): boolean => {
    if (fd === undefined || end === good) return true;
    try {
      fs.ftruncateSync(fd, good);
      end = good;
      return true;
    } catch {
      return false;
    }
  };

  const writeRecord = (out: number, rec: unknown) => {
    const line = Buffer.from(`${JSON.stringify(rec)}\n`);
    // A fragment that could not be cut off is ended here, so it stays one unparsable line of its own.
    const buf = cutBack() ? line : Buffer.concat([Buffer.from([NL]), line]);
    const at = end;
    const progress = { n: 0 };
    try {
      writeFully(fs, out, buf, at, progress);
      if (opts.fsync) fs.fsyncSync(out);
    } catch (e) {
      end = Math.max(end, at + progress.n);
      cutBack();
      // The record lives only in memory (pending / done) now: the next append that works is followed by a rewrite.
      appends = every;
      throw new ClawError('mqtt.journal_write', `request journal ${file}: record not written: ${message(e)}`, { cause: e });
    }
    good = end = at + progress.n;
  };

  /** Rewrites the file with the live records; on failure the existing file stays as it was and in use. */
  const agesNow = (now = opts.now()) => (opts.ages ? opts.ages() : (at: number) => now - at);
  const rewrite = (age: (at: number) => number, windowMs: number): ClawError | undefined => {
    for (const [k, d] of done) if (age(d.at) >= windowMs) done.delete(k);
    const tmp = `${file}.tmp`;
    let out: number | undefined;
    let size = 0;
    try {
      fs.mkdirSync(folder, { recursive: true });
      out = fs.openSync(tmp, 'w');
      for (const rec of [...[...pending.values()].map((r) => ({ t: 'req', ...r })), ...[...done.values()].map((d) => ({ t: 'done', ...d }))]) {
        const line = Buffer.from(`${JSON.stringify(rec)}\n`);
        writeFully(fs, out, line, size);
        size += line.length;
      }
      fs.fsyncSync(out);
      fs.renameSync(tmp, file);
    } catch (e) {
      if (out !== undefined) tryClose(out);
      try {
        fs.unlinkSync(tmp);
      } catch {
        // never created
      }
      appends = 0; // tried again after another `compactEvery` appends, not at every message of a full disk
      const still = fd !== undefined || fs.existsSync(file) ? 'the existing file stays in use' : 'requests are not journaled until it can be written';
      return new ClawError('mqtt.journal_rewrite', `request journal ${file}: rewrite failed, ${still}: ${message(e)}`, { cause: e });
    }
    // The rename carries every record: with fsync on, it has to survive power loss too.
    if (opts.fsync) fsyncDirBestEffort(fs, folder);
    if (fd !== undefined) tryClose(fd);
    // The temp file's descriptor is the journal's now: no reopen that could fail after the rename.
    fd = out;
    good = end = size;
    appends = 0;
    // The file holds all of memory now.
    unwritten.clear();
    overflow = false;
    return undefined;
  };

  const keep = (rec: Rec) => {
    unwritten.delete(rec.k);
    if (overflow) return;
    if (unwritten.size >= MAX_UNWRITTEN) {
      unwritten.clear();
      overflow = true;
    } else unwritten.set(rec.k, rec);
  };

  /** Appends the unwritten records, oldest first; throws at the first failure (the rest stay unwritten). */
  const catchUp = () => {
    if (state !== 'open' || (unwritten.size === 0 && !overflow)) return;
    if (fd === undefined || overflow) {
      const err = rewrite(agesNow(), opts.windowMs);
      if (err) throw new ClawError('mqtt.journal_write', `request journal ${file}: unwritten records not written: ${message(err.cause)}`, { cause: err });
      return;
    }
    // A retry that fails again does not make the next append rewrite the whole journal (writeRecord's reaction
    // to a new failure): on a disk that stays full that would be a failed rewrite and a warning per message.
    const due = appends;
    for (const [k, rec] of unwritten) {
      try {
        writeRecord(fd, rec);
      } catch (e) {
        appends = due;
        throw e;
      }
      unwritten.delete(k);
    }
  };

  const append = (rec: Rec) => {
    if (state !== 'open') return;
    // This record supersedes an unwritten one of the same key (a request's done after its failed req).
    unwritten.delete(rec.k);
    if (fd === undefined) {
      // No file open (it could not be created at start): the rewrite writes this record with all the others.
      const err = rewrite(agesNow(), opts.windowMs);
      if (err) {
        keep(rec);
        throw new ClawError('mqtt.journal_write', `request journal ${file}: record not written: ${message(err.cause)}`, { cause: err });
      }
      return;
    }
    try {
      writeRecord(fd, rec);
    } catch (e) {
      keep(rec);
      throw e;
    }
    // Space again: what failed before goes out now (a failure here is the retry timer's to report).
    try {
      catchUp();
    } catch {
      // still unwritten
    }
    if (++appends >= every) {
      const err = rewrite(agesNow(), opts.windowMs);
      if (err) warn(err);
    }
  };

  return {
    file,
    load(now, windowMs, onWarn) {
      if (onWarn) warn = onWarn;
      let bytes: Uint8Array | undefined;
      try {
        if (fs.existsSync(file)) bytes = fs.readFileSync(file);
      } catch (e) {
        throw new ClawError('mqtt.journal_read', `request journal ${file} could not be read: ${message(e)}`, { cause: e });
      }
      if (bytes) {
        for (const line of Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8').split('\n')) {
          if (!line) continue;
          let rec: { t?: string; k?: string; at?: number; req?: InboundRequest; replies?: string[] };
          try {
            rec = JSON.parse(line);
          } catch {
            continue; // a torn last line from a crash mid-append: that request was never acknowledged
          }
          if (typeof rec.k !== 'string' || typeof rec.at !== 'number') continue;
          if (rec.t === 'req' && rec.req && typeof rec.req.text === 'string') pending.set(rec.k, { k: rec.k, at: rec.at, req: rec.req });
          else if (rec.t === 'done' && Array.isArray(rec.replies)) {
            pending.delete(rec.k);
            done.set(rec.k, { k: rec.k, at: rec.at, replies: rec.replies });
          }
        }
      }
      state = 'open';
      const err = rewrite(agesNow(now), windowMs);
      if (err) warn(err);
      if (err && bytes) {
        // Appends go on in the existing file; a torn last line (crash mid-append) is cut off before the first.
        try {
          fd = fs.openSync(file, 'r+');
          end = bytes.length;
          good = bytes.lastIndexOf(NL) + 1;
        } catch (e) {
          warn(new ClawError('mqtt.journal_open', `request journal ${file} could not be opened, requests are not journaled until it can be written: ${message(e)}`, { cause: e }));
        }
      }
      return { pending: [...pending.values()], done: [...done.values()] };
    },
    request(r) {
      pending.set(r.k, r);
      append({ t: 'req', ...r });
    },
    done(d) {
      pending.delete(d.k);
      if (d.replies.length > 0) done.set(d.k, d);
      append({ t: 'done', ...d });
    },
    flush: catchUp,
    unwritten: () => ({ keys: [...unwritten.keys()], overflow }),
    close() {
      state = 'closed';
      if (fd !== undefined) tryClose(fd);
      fd = undefined;
    },
  };
}

