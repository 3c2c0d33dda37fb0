// The agent's request journal (docs/transports.md, MQTT "Delivery"): a request is appended here before its
// PUBACK goes out (mqtt.js emits 'message' synchronously before acknowledging), and its reply before the reply
// is published. On start, requests with no reply are delivered again (the agent crashed between the
// acknowledgement and the answer: at least once), and stored replies within the window answer redeliveries
// and retries (request_id dedup across restarts). Without it, an acknowledged request is lost with the process.
//
// File: JSON lines, {dataDir}/mqtt/{client_id}.journal. Appends are synchronous (they survive kill -9);
// fsync (power loss) is opt-in, it costs a disk flush per message. Rewritten (tmp + rename) with only the
// live records at start and every `compactEvery` appends.
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
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
  /** Live records: requests without a reply, and replies younger than `windowMs`. Rewrites the file. */
  load(now: number, windowMs: number): { pending: JournalRequest[]; done: JournalDone[] };
  request(r: JournalRequest): void;
  done(d: JournalDone): void;
  close(): void;
}

export function createFileJournal(dir: string, clientId: string, opts: { fsync?: boolean; compactEvery?: number; windowMs: number; now: () => number }): RequestJournal {
  const folder = `${dir.replace(/\/$/, '')}/mqtt`;
  const file = `${folder}/${clientId.replace(/[^A-Za-z0-9_.-]/g, '_')}.journal`;
  let fd: number | undefined;
  let appends = 0;
  const pending = new Map<string, JournalRequest>();
  const done = new Map<string, JournalDone>();

  const append = (rec: unknown) => {
    if (fd === undefined) return;
    writeSync(fd, `${JSON.stringify(rec)}\n`);
    if (opts.fsync) fsyncSync(fd);
    if (++appends >= (opts.compactEvery ?? 2000)) rewrite(opts.now(), opts.windowMs);
  };

  const rewrite = (now: number, windowMs: number) => {
    for (const [k, d] of done) if (now - d.at >= windowMs) done.delete(k);
    const tmp = `${file}.tmp`;
    const out = openSync(tmp, 'w');
    for (const r of pending.values()) writeSync(out, `${JSON.stringify({ t: 'req', ...r })}\n`);
    for (const d of done.values()) writeSync(out, `${JSON.stringify({ t: 'done', ...d })}\n`);
    fsyncSync(out);
    closeSync(out);
    if (fd !== undefined) closeSync(fd);
    renameSync(tmp, file);
    fd = openSync(file, 'a');
    appends = 0;
  };

  return {
    load(now, windowMs) {
      mkdirSync(folder, { recursive: true });
      if (existsSync(file)) {
        for (const line of readFileSync(file, 'utf8').split('\n')) {
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
      rewrite(now, windowMs);
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
    close() {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}
