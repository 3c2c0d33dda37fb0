// The filesystem transport, sending side (`claw send fs:/dir ...`, swarm peers, tests): writes a
// request as inbox/{timestamp_ns}-{request_id}.json (`.tmp` then rename, profile §6.3) and waits for
// a file named *-{request_id}.json in its reply directory: outbox/, or outbox/{sender}/ when the
// client has a sender name (sent as the request's `reply_to`). Replies are removed once read.
import { existsSync, mkdirSync, readdirSync, unlinkSync, watch, type FSWatcher } from 'node:fs';
import type { JsonRpcNotification } from '../../protocol/jsonrpc.ts';
import { ClawError } from '../../protocol/errors.ts';
import { newRequestId, type ClientOptions, type RequestOptions, type TransportClient } from '../client.ts';
import { DIRS, REPLY_TO, REQUEST_ID, fileName, parseFileName, readRegular, timestampNs, writeAtomic } from './layout.ts';
import { FS_DEFAULTS, modeOf, parseFsUri } from './options.ts';
import { timerDelay } from '../../protocol/delay.ts';

interface Waiter {
  resolve(v: unknown): void;
  reject(e: Error): void;
  timer: ReturnType<typeof setTimeout>;
}

export async function connectFsClient(uri: string, opts: ClientOptions): Promise<TransportClient> {
  const parsed = parseFsUri(uri, opts.baseDir);
  if ('error' in parsed) throw new ClawError('usage', parsed.error);
  const root = parsed.dir;
  const watchOn = parsed.options.watch ?? FS_DEFAULTS.watch;
  const pollMs = parsed.options.poll_interval_ms ?? FS_DEFAULTS.poll_interval_ms;
  const fsync = parsed.options.fsync ?? false; // the request survives a crash of the writer without it; power loss is the reader's concern
  if (!existsSync(`${root}/${DIRS.inbox}`)) throw new ClawError('transport', `no agent listens on ${uri}: ${root}/${DIRS.inbox} does not exist`);
  const sender = opts.sender;
  if (sender !== undefined && !REPLY_TO.test(sender)) throw new ClawError('usage', `sender name "${sender}" must be 1-128 characters of A-Z a-z 0-9 _ . -`);
  // A named sender reads outbox/{sender}/, and outbox/ too: the reply to a file the agent could not
  // read (oversize, not JSON) cannot name a reply_to and lands there.
  const replyDirs = sender ? [`${root}/${DIRS.outbox}/${sender}`, `${root}/${DIRS.outbox}`] : [`${root}/${DIRS.outbox}`];
  mkdirSync(replyDirs[0], { recursive: true });

  const pending = new Map<string, Waiter>();
  let watchers: FSWatcher[] = [];
  let poll: ReturnType<typeof setInterval> | undefined;
  let closed = false;

  const check = () => {
    for (const replyDir of replyDirs) checkDir(replyDir);
  };
  const checkDir = (replyDir: string) => {
    if (pending.size === 0) return;
    let names: string[];
    try {
      names = readdirSync(replyDir);
    } catch {
      return;
    }
    for (const name of names.sort()) {
      const p = parseFileName(name);
      const w = p && pending.get(p.requestId);
      if (!w) continue;
      const file = `${replyDir}/${name}`;
      let value: unknown;
      try {
        value = JSON.parse(String(readRegular(file)));
      } catch {
        continue; // renamed into place complete; unreadable means someone else took it: keep waiting
      }
      try {
        unlinkSync(file);
      } catch {}
      pending.delete(p!.requestId);
      clearTimeout(w.timer);
      w.resolve(value);
    }
    if (pending.size === 0) idle();
  };

  const active = () => {
    if (watchOn && watchers.length === 0) {
      for (const dir of replyDirs) {
        try {
          const w = watch(dir, () => check());
          w.on('error', () => w.close());
          watchers.push(w);
        } catch {}
      }
    }
    if (!poll) poll = setInterval(check, timerDelay(pollMs));
  };
  const idle = () => {
    for (const w of watchers) w.close();
    watchers = [];
    if (poll) clearInterval(poll);
    poll = undefined;
  };

  const mode = modeOf(parsed.options.file_mode ?? FS_DEFAULTS.file_mode);
  const write = (rid: string, text: string) => writeAtomic(`${root}/${DIRS.inbox}`, fileName(timestampNs(), rid), text, fsync, mode);

  const ridOf = (requestId?: string) => {
    const rid = requestId ?? newRequestId();
    if (!REQUEST_ID.test(rid)) throw new ClawError('usage', `request_id "${rid}" must be 1-128 characters of A-Z a-z 0-9 _ . -`);
    return rid;
  };

  const send = (text: string, o: RequestOptions & { expectReply?: boolean } = {}): Promise<unknown> => {
    if (closed) return Promise.reject(new ClawError('closed', 'client closed'));
    const rid = ridOf(o.requestId);
    if (o.expectReply === false) {
      write(rid, text);
      return Promise.resolve(undefined);
    }
    const timeoutMs = o.timeoutMs ?? 30_000;
    return new Promise((resolve, reject) => {
      if (pending.has(rid)) return reject(new ClawError('usage', `request_id ${rid} is already waiting for a reply`));
      // Waiting starts before the file exists, so a fast reply is never missed.
      const timer = setTimeout(() => {
        pending.delete(rid);
        if (pending.size === 0) idle();
        reject(new ClawError('timeout', `no reply to request_id ${rid} within ${timeoutMs} ms`));
      }, timerDelay(timeoutMs));
      pending.set(rid, { resolve, reject, timer });
      active();
      try {
        write(rid, text);
      } catch (e) {
        clearTimeout(timer);
        pending.delete(rid);
        return reject(new ClawError('transport', `cannot write the request: ${(e as Error).message}`, { cause: e }));
      }
      check();
    });
  };

  const withReplyTo = (m: object) => (sender && !Array.isArray(m) ? { ...m, reply_to: sender } : m);
  /** Raw text gets reply_to too when it is a JSON object; anything else is sent as is. */
  const rawWithReplyTo = (text: string) => {
    if (!sender) return text;
    try {
      const v = JSON.parse(text);
      return typeof v === 'object' && v !== null && !Array.isArray(v) ? JSON.stringify(withReplyTo(v)) : text;
    } catch {
      return text;
    }
  };
  const noteWatchers: FSWatcher[] = [];
  const notePolls: ReturnType<typeof setInterval>[] = [];

  return {
    request: (m, o) => send(JSON.stringify(withReplyTo(m)), o) as ReturnType<TransportClient['request']>,
    notify: async (m, o) => {
      await send(JSON.stringify(withReplyTo(m)), { ...o, expectReply: false });
    },
    sendRaw: (text, o) => send(rawWithReplyTo(text), o),
    onNotification(fn) {
      // notifications/ is shared by every listener: each client remembers what it has seen.
      const dir = `${root}/${DIRS.notifications}`;
      const seen = new Set<string>(existsSync(dir) ? readdirSync(dir) : []);
      const look = () => {
        let names: string[];
        try {
          names = readdirSync(dir).sort();
        } catch {
          return;
        }
        for (const n of names) {
          if (seen.has(n) || !n.endsWith('.json')) continue;
          seen.add(n);
          try {
            fn(JSON.parse(String(readRegular(`${dir}/${n}`))) as JsonRpcNotification);
          } catch {}
        }
      };
      if (watchOn) {
        try {
          noteWatchers.push(watch(dir, look));
        } catch {}
      }
      notePolls.push(setInterval(look, timerDelay(pollMs)));
    },
    async close() {
      closed = true;
      for (const [, w] of pending) {
        clearTimeout(w.timer);
        w.reject(new ClawError('closed', 'client closed'));
      }
      pending.clear();
      idle();
      for (const w of noteWatchers) w.close();
      for (const p of notePolls) clearInterval(p);
    },
  };
}
