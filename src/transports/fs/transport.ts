// The filesystem transport, listening side (spec §9.2, runtime profile §6.3; docs/transports.md).
// Requests arrive as files in inbox/, are claimed by renaming them into .state/processing/ (atomic:
// one reader gets a file once), are answered into outbox/ (or outbox/{reply_to}/) and then archived
// or deleted. The answer is stored under .state/answered/{request_id}.json before the request file
// leaves processing/, so a re-delivered request_id gets the stored reply and never runs twice,
// across restarts too. A request found in processing/ at start-up without a stored answer was cut
// off by a crash: it is answered with an "interrupted" error, never run again (at most once).
import { lstatSync, mkdirSync, readdirSync, renameSync, unlinkSync, watch, type FSWatcher } from 'node:fs';
import { nodeCrypto } from '../../node/lazy.ts';
import type { Clock, InboundFrame, Logger, Transport } from '../../kernel/ports.ts';
import { WallAges } from '../../kernel/wall-age.ts';
import { classify, type JsonRpcMessage } from '../../protocol/jsonrpc.ts';
import { ErrorCode, isNotExecuted } from '../../protocol/errors.ts';
import { UNPARSED_DEPTH, textNestsDeeperThan } from '../../protocol/depth.ts';
import { DEFAULT_MAX_FRAME_BYTES } from '../../protocol/framing.ts';
import { canonicalJson } from '../../protocol/canonical-json.ts';
import { DIRS, REPLY_TO, assertRealDir, fileName, fsyncDirSync, parseFileName, readRegular, timestampNs, writeAtomic, writeAtomicAsync } from './layout.ts';
import { modeOf, type ResolvedFsOptions } from './options.ts';
import { sweep } from './maintenance.ts';
import { timerDelay } from '../../protocol/delay.ts';

export interface FsTransportDeps {
  dir: string;
  /** File names are stamped with its wall time; the sweep ages them across a wall-clock step (./maintenance.ts). */
  clock: Pick<Clock, 'now' | 'monotonic'>;
  options: ResolvedFsOptions;
  log: Logger;
  maxFrameBytes?: number;
  /** Transport name the router sees (default `fs:{dir}`). */
  name?: string;
  /**
   * Masks resolved secret values in a request's text before it is kept (archive/, rejected/): an operator may
   * pass a key as a tool's arguments, and no file the runtime keeps may hold it (runtime profile §7).
   */
  redact?: (text: string) => string;
}

interface Answered {
  hash: string;
  reply: JsonRpcMessage | JsonRpcMessage[] | null;
}

/** What a request file holds, as far as the transport needs to know. */
interface Inspected {
  text?: string;
  /** Bytes of the file held with `text` (counted against max_in_flight_bytes). */
  size?: number;
  hash: string;
  replyTo?: string;
  /** The router will send a reply (a request, an invalid message, a batch with one of those). */
  expectsReply: boolean;
  /** Malformed: not JSON, not a JSON-RPC message, a bad reply_to. Moved to rejected/ once answered. */
  malformed: boolean;
  value?: unknown;
  /** Why the transport itself refuses the file (a bad reply_to): answered here, never delivered. */
  refuse?: string;
}

/** Every reply is an error that says nothing ran (protocol/errors.ts isNotExecuted); a batch only when all are. */
function refusedUnrun(reply: JsonRpcMessage | JsonRpcMessage[] | null): boolean {
  const all = Array.isArray(reply) ? reply : reply === null ? [] : [reply];
  return all.length > 0 && all.every((m) => 'error' in m && m.error !== undefined && isNotExecuted(m.error.code, m.error.data));
}

/** How often a reply that could not be stored (ENOSPC, EIO) is tried again while the transport is open. */
export const REPLY_RETRY_MS = 2000;

export function createFsTransport(d: FsTransportDeps): Transport {
  const root = d.dir;
  const opt = d.options;
  const limit = d.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  const fileMode = modeOf(opt.file_mode);
  const path = (sub: string, name?: string) => (name ? `${root}/${sub}/${name}` : `${root}/${sub}`);
  let deliver: ((f: InboundFrame) => void) | undefined;
  let open = true;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((r) => (resolveClosed = r));
  let watcher: FSWatcher | undefined;
  const timers: ReturnType<typeof setInterval>[] = [];
  /** request_id → the running request's completion (a duplicate arriving meanwhile waits for it). */
  const running = new Map<string, Promise<void>>();
  /** Claimed and not yet answered: bounded by max_in_flight(_bytes) so a flood waits in inbox/ (docs/transports.md). */
  let held = 0;
  let heldBytes = 0;
  let scanning = false;
  let rescan = false;
  let notifySeq = 0;

  const finish = () => {
    if (!open) return;
    open = false;
    watcher?.close();
    for (const t of timers) clearInterval(t);
    resolveClosed();
  };

  const readAnswered = (rid: string): Answered | undefined => {
    try {
      return JSON.parse(String(readRegular(path(DIRS.answered, `${rid}.json`)))) as Answered;
    } catch {
      return undefined;
    }
  };

  /** Write a reply file into the sender's reply directory (outbox/ or outbox/{reply_to}/). Async only so a throw is a rejection. */
  const writeReply = async (rid: string, replyTo: string | undefined, reply: JsonRpcMessage | JsonRpcMessage[]) => {
    let sub: string = DIRS.outbox;
    if (replyTo) {
      try {
        mkdirSync(path(DIRS.outbox, replyTo));
      } catch {}
      try {
        // outbox/{reply_to} may be a peer's symlink to a host directory: never written through; outbox/ instead.
        assertRealDir(root, `${DIRS.outbox}/${replyTo}`);
        sub = `${DIRS.outbox}/${replyTo}`;
      } catch (e) {
        d.log.warn('fs transport: reply_to is not a real directory; reply written to outbox/', { request_id: rid, error: String(e) });
      }
    }
    // Checked above with its reply directory (outbox/ is its first part); alone otherwise.
    if (sub === DIRS.outbox) assertRealDir(root, sub);
    const dir = path(sub);
    writeAtomic(dir, fileName(timestampNs(d.clock.now()), rid), JSON.stringify(reply), false, fileMode);
  };

  /**
   * The request file leaves processing/: archived, deleted, or (malformed) kept in rejected/. A kept copy holding
   * a resolved secret is written redacted instead of renamed (the request's own bytes are not kept then).
   */
  const retire = async (name: string, malformed: boolean, info?: Inspected) => {
    const from = path(DIRS.processing, name);
    try {
      const keepIn = malformed ? DIRS.rejected : opt.processed === 'archive' ? DIRS.archive : undefined;
      const masked = keepIn && info ? maskedText(info) : undefined;
      if (keepIn) assertRealDir(root, keepIn);
      if (keepIn && masked !== undefined) {
        writeAtomic(path(keepIn), name, masked, false, fileMode);
        unlinkSync(from);
      } else if (keepIn) renameSync(from, path(keepIn, name));
      else unlinkSync(from);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') d.log.warn('fs transport: cannot retire request file', { file: name, error: String(e) });
    }
  };

  /**
   * The request's text with resolved secrets masked, or undefined when it holds none. A parsed message is masked
   * string by string (a secret written with JSON escapes is still found), then the text as a whole.
   */
  const maskedText = (info: Inspected): string | undefined => {
    const redact = d.redact;
    if (!redact || info.text === undefined) return undefined;
    let candidate = info.text;
    if (info.value !== undefined) {
      let changed = false;
      const masked = JSON.stringify(info.value, (_k, v: unknown) => {
        if (typeof v !== 'string') return v;
        const r = redact(v);
        if (r !== v) changed = true;
        return r;
      });
      if (changed) candidate = masked;
    }
    const text = redact(candidate);
    return text === info.text ? undefined : text;
  };

  /** Writes still going; close() waits for them so replies to frames delivered before it go out. */
  const completing = new Set<Promise<void>>();
  const track = (p: Promise<void>) => {
    completing.add(p);
    void p.finally(() => completing.delete(p));
    return p;
  };

  /**
   * Store the answer first, then send it, then retire the request: the order is what makes a crash
   * safe. Only the fsyncs (fsync: true) leave the event loop; the other steps are page-cache work.
   */
  const complete = (name: string, rid: string, info: Inspected, reply: JsonRpcMessage | JsonRpcMessage[] | null) =>
    track(
      (async () => {
        for (let attempt = 1; ; attempt++) {
          try {
            // Only the answer of executed work is kept for the request_id: a refusal before any work (not
            // initialized yet, invalid params, a parse error) is sent but not stored, so a retry runs.
            if (!refusedUnrun(reply)) {
              const record: Answered = { hash: info.hash, reply };
              assertRealDir(root, DIRS.answered);
              await writeAtomicAsync(path(DIRS.answered), `${rid}.json`, JSON.stringify(record), opt.fsync);
            }
            if (reply !== null) await writeReply(rid, info.replyTo, reply);
            if (attempt > 1) d.log.info('fs transport: reply stored', { file: name, attempts: attempt });
            break;
          } catch (e) {
            // The answer is still in memory: tried again while the transport is open (a full disk that frees up,
            // a directory put back), the request staying in processing/ meanwhile, and a copy of its request_id
            // waiting for it (running). Closed first: a restart answers it as interrupted rather than losing it.
            if (attempt === 1) d.log.error('fs transport: cannot store reply', { file: name, error: String(e), retry_ms: REPLY_RETRY_MS });
            if (!open) return;
            await new Promise<void>((r) => {
              const t = setTimeout(r, REPLY_RETRY_MS);
              void closed.then(() => (clearTimeout(t), r()));
            });
            if (!open) return;
          }
        }
        await retire(name, info.malformed, info);
      })(),
    );

  /** complete(), with later copies of the same request_id waiting for it. */
  const completeTracked = (name: string, rid: string, info: Inspected, reply: JsonRpcMessage | JsonRpcMessage[] | null) => {
    const p = complete(name, rid, info, reply).then(() => {
      if (running.get(rid) === p) running.delete(rid);
    });
    running.set(rid, p);
    return p;
  };

  const inspect = (name: string): Inspected => {
    let bytes: Buffer | { over: number };
    try {
      bytes = readRegular(path(DIRS.processing, name), limit);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // A symlink, FIFO, device, directory: refused unread, so nothing of what it names reaches a reply.
      if (code !== 'ELOOP' && code !== 'ENOTREG') throw e;
      return { hash: 'not-regular', expectsReply: true, malformed: true, refuse: 'Invalid request: not a regular file (a symlink, FIFO, device or directory); refused unread' };
    }
    if ('over' in bytes) return { hash: `oversize:${bytes.over}`, expectsReply: true, malformed: true };
    const size = bytes.length;
    let hash = digest(bytes);
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      return { hash, expectsReply: true, malformed: true };
    }
    // Not parsed: the router refuses it unparsed (protocol/depth.ts).
    if (textNestsDeeperThan(text, UNPARSED_DEPTH)) return { text, size, hash, expectsReply: true, malformed: true };
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return { text, size, hash, expectsReply: true, malformed: true };
    }
    const isObj = typeof value === 'object' && value !== null && !Array.isArray(value);
    const replyTo = isObj ? (value as { reply_to?: unknown }).reply_to : undefined;
    // The dedup fingerprint is the message, not its bytes: key order, spacing and the reply
    // directory may differ between a writer and its retry (docs/transports.md).
    if (isObj) {
      const { reply_to: _r, ...rest } = value as Record<string, unknown>;
      hash = digest(canonicalJson(rest));
    } else hash = digest(canonicalJson(value));
    if (replyTo !== undefined && (typeof replyTo !== 'string' || !REPLY_TO.test(replyTo))) {
      return { text, size, hash, value, expectsReply: true, malformed: true, refuse: 'Invalid request: reply_to must be 1-128 characters of A-Z a-z 0-9 _ . - (a directory name under outbox/)' };
    }
    const items = Array.isArray(value) ? value : [value];
    const kinds = items.map((x) => classify(x).type);
    const malformed = (Array.isArray(value) && value.length === 0) || (!Array.isArray(value) && kinds[0] === 'invalid');
    const expectsReply = malformed || kinds.some((k) => k === 'request' || k === 'invalid');
    return { text, size, hash, value, replyTo: replyTo as string | undefined, expectsReply, malformed };
  };

  /** Read one claimed file (already in processing/); undefined when it cannot be read. */
  const read = (name: string): Inspected | undefined => {
    try {
      return inspect(name);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') d.log.warn('fs transport: cannot read request', { file: name, error: String(e) });
    }
  };

  /** Count a read file as held until `done` settles; its end frees room for what waits in inbox/. */
  const hold = (info: Inspected, done: Promise<unknown> | undefined) => {
    const n = info.size ?? 0;
    held++;
    heldBytes += n;
    const release = () => {
      held--;
      heldBytes -= n;
      scheduleScan();
    };
    void Promise.resolve(done).then(release, release);
  };

  /** Handle one claimed and read file; settles when it is answered and retired. */
  const handle = (name: string, rid: string, recovered: boolean, info: Inspected): Promise<unknown> | undefined => {
    const prior = readAnswered(rid);
    if (prior) {
      // At-least-once delivery + request_id dedup = exactly-once execution (profile §5, §6.2).
      if (prior.hash === info.hash) {
        d.log.debug('fs transport: re-delivered request answered from store', { request_id: rid });
        const resend = prior.reply;
        return track((async () => {
          if (resend !== null) await writeReply(rid, info.replyTo, resend).catch((e) => d.log.warn('fs transport: write failed', { error: String(e) }));
          await retire(name, info.malformed, info);
        })());
      } else {
        const err = failureFor(info.value, ErrorCode.InvalidRequest, `Invalid request: request_id ${rid} was already used for a different request`);
        return track((async () => {
          await writeReply(rid, info.replyTo, err).catch((e) => d.log.warn('fs transport: write failed', { error: String(e) }));
          await retire(name, true, info);
        })());
      }
    }
    const inflight = running.get(rid);
    if (inflight) {
      // Same request_id while the first copy runs: answer it when the first one is answered.
      return inflight.then(() => handle(name, rid, recovered, info));
    }
    if (recovered) {
      // Found in processing/ at start-up with no stored answer: a crash interrupted it. We cannot know
      // whether its effects happened, so it is not run again (docs/transports.md, "guarantees").
      const reply = info.expectsReply
        ? failureFor(info.value, ErrorCode.InternalError, 'Internal error: the runtime stopped while processing this request; it was not run again', {
            request_id: rid,
            reason: 'interrupted',
          })
        : null;
      return completeTracked(name, rid, info, reply);
    }
    if (info.refuse) return completeTracked(name, rid, info, failureFor(info.value, ErrorCode.InvalidRequest, info.refuse));
    if (!deliver) return;
    let done!: () => void;
    const finished = new Promise<void>((r) => (done = r));
    running.set(rid, finished);
    let ended = false;
    const end = (reply: JsonRpcMessage | JsonRpcMessage[] | null) => {
      if (ended) return;
      ended = true;
      void complete(name, rid, info, reply).then(() => {
        running.delete(rid);
        done();
      });
    };
    const payload: InboundFrame['payload'] =
      info.text === undefined
        ? info.hash.startsWith('oversize:')
          ? { error: 'oversize', bytes: Number(info.hash.slice(9)), limit }
          : { error: 'encoding' }
        : { text: info.text };
    deliver({ payload, reply: (m) => end(m) });
    // Notifications (and responses) get no reply: they are done once handed to the router.
    if (!info.expectsReply) end(null);
    return finished;
  };

  /**
   * Claim the request files in the inbox, in name order (timestamp, then request_id), while fewer than
   * max_in_flight are held and their bytes are under max_in_flight_bytes; the rest stay for a later scan.
   */
  const scan = () => {
    if (!open || !deliver) return;
    if (scanning) {
      rescan = true;
      return;
    }
    scanning = true;
    try {
      do {
        rescan = false;
        let names: string[];
        try {
          names = readdirSync(path(DIRS.inbox));
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
            d.log.warn('fs transport: inbox removed; closing', { dir: root });
            finish();
            return;
          }
          throw e;
        }
        names.sort();
        const claimed: { name: string; requestId: string; info: Inspected }[] = [];
        let bytes = heldBytes;
        for (const name of names) {
          if (!open) return;
          if (held + claimed.length >= opt.max_in_flight || bytes >= opt.max_in_flight_bytes) break;
          if (name.endsWith('.tmp')) continue; // a writer is still writing it (cleaned by the sweep when old)
          const parsed = parseFileName(name);
          if (!parsed) {
            // Not `{timestamp_ns}-{request_id}.json`: no request_id to answer under; set aside, never retried.
            try {
              if (lstatSync(path(DIRS.inbox, name)).isDirectory()) continue;
              assertRealDir(root, DIRS.rejected);
              renameSync(path(DIRS.inbox, name), path(DIRS.rejected, name));
              d.log.warn('fs transport: file name is not {timestamp_ns}-{request_id}.json; moved to rejected/', { file: name });
            } catch {}
            continue;
          }
          try {
            assertRealDir(root, DIRS.processing);
            renameSync(path(DIRS.inbox, name), path(DIRS.processing, name));
          } catch (e) {
            if ((e as NodeJS.ErrnoException).code !== 'ENOENT') d.log.warn('fs transport: cannot claim request', { file: name, error: String(e) });
            continue;
          }
          const info = read(name);
          if (!info) continue;
          bytes += info.size ?? 0;
          claimed.push({ name, requestId: parsed.requestId, info });
        }
        // fsync: the claims must be durable before anything runs, or a power loss would put a request
        // that already ran back into the inbox. One directory fsync covers the whole scan.
        if (opt.fsync && claimed.length > 0) fsyncDirSync(path(DIRS.processing));
        for (const c of claimed) hold(c.info, handle(c.name, c.requestId, false, c.info));
      } while (rescan && open);
    } catch (e) {
      d.log.error('fs transport: scan failed', { error: String(e) });
    } finally {
      scanning = false;
    }
  };

  let scheduled = false;
  const scheduleScan = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      scan();
    });
  };

  const safe = (fn: () => void) => {
    try {
      fn();
    } catch (e) {
      d.log.warn('fs transport: write failed', { error: String(e) });
    }
  };

  return {
    name: d.name ?? `fs:${root}`,
    closed,
    start(fn) {
      deliver = fn;
      for (const sub of Object.values(DIRS)) {
        mkdirSync(path(sub), { recursive: true });
        // A state directory that is a symlink would take every write elsewhere: refuse to start.
        assertRealDir(root, sub);
      }
      // Crash recovery first: what a previous run claimed and did not finish.
      for (const name of readdirSync(path(DIRS.processing)).sort()) {
        const parsed = parseFileName(name);
        const info = parsed && read(name);
        if (info) hold(info, handle(name, parsed.requestId, true, info));
      }
      if (opt.watch) {
        try {
          watcher = watch(path(DIRS.inbox), { persistent: true }, (_event, file) => {
            if (!file || !String(file).endsWith('.tmp')) scheduleScan();
          });
          watcher.on('error', (e) => {
            d.log.warn('fs transport: watch failed; polling only', { error: String(e) });
            watcher?.close();
            watcher = undefined;
          });
        } catch (e) {
          d.log.warn('fs transport: cannot watch the inbox; polling only', { error: String(e) });
        }
      }
      timers.push(setInterval(scan, timerDelay(opt.poll_interval_ms)));
      const sweepEvery = Math.max(1000, Math.min(60_000, Math.floor(opt.tmp_max_age_ms / 2)));
      const ages = new WallAges(d.clock);
      const doSweep = () => safe(() => sweep(root, opt, ages.ages(), d.log));
      timers.push(setInterval(doSweep, timerDelay(sweepEvery)));
      doSweep();
      scan();
    },
    notify(message) {
      // Agent-initiated notifications (claw.heartbeat) go to notifications/, newest last.
      if (!open) return;
      safe(() => {
        assertRealDir(root, DIRS.notifications);
        writeAtomic(path(DIRS.notifications), fileName(timestampNs(d.clock.now()), `n${process.pid}-${++notifySeq}`), JSON.stringify(message), false, fileMode);
      });
    },
    async close() {
      finish();
      await Promise.all([...completing]);
    },
  };
}

const digest = (data: string | Uint8Array) => nodeCrypto().createHash('sha256').update(data).digest('hex');

/** An error reply shaped like the message it answers: one per request in a batch, the id echoed. */
function failureFor(value: unknown, code: number, message: string, data?: unknown): JsonRpcMessage | JsonRpcMessage[] {
  const err = data === undefined ? { code, message } : { code, message, data };
  const idOf = (x: unknown) => {
    const id = typeof x === 'object' && x !== null ? (x as { id?: unknown }).id : undefined;
    return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
  };
  if (Array.isArray(value) && value.length > 0) {
    const out = value.filter((x) => classify(x).type !== 'notification' && classify(x).type !== 'response');
    if (out.length > 0) return out.map((x) => ({ jsonrpc: '2.0' as const, id: idOf(x), error: err }));
  }
  return { jsonrpc: '2.0', id: idOf(value), error: err };
}
