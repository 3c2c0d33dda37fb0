// What a Telegram channel keeps across restarts, in data_dir/channels/{channel}/telegram/:
// `state.json` holds the next getUpdates offset; `pending/{update_id}[-n].json` the accepted messages of one
// getUpdates answer (named by the first; `-n` when that name is taken: update ids start over, so an older
// batch may still be in flight under it) whose answers have not all gone out yet. The messages are journaled in
// `pending/` *before* the offset moves past them, and each leaves its file once its answer is sent: after a crash,
// the saved offset confirms everything handled before it (an update the server still serves below it, beside
// newer ones, is skipped: never replayed) and one found in `pending/` below it is answered "interrupted" (never
// lost without a word, never run twice); one at or above it was never confirmed, so the server serves it again
// and it runs then. The offset only moves back when the server's update ids start over (`restart`, channel.ts).
// Both writes are fsynced, once per answer of up to 100 updates: a backlog after an outage costs two syncs, not
// two per message (200 fsyncs held the event loop 0.8–3.6 s here, longer on an SD card). Removing an answered
// message is not synced: lost to a power cut, it costs one needless "interrupted" notice, never a message.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { writeAtomic } from '../../transports/fs/layout.ts';

export interface PendingMessage {
  update_id: number;
  chat_id: number;
  message_id: number;
}

export interface TelegramState {
  offset(): number;
  /** Journal the accepted messages of one getUpdates answer (before `advance`). */
  accept(batch: readonly PendingMessage[]): void;
  advance(nextOffset: number): void;
  /** The server's update ids started over: the offset moves back to `offset` (never otherwise). */
  restart(offset: number): void;
  answered(updateId: number): void;
  /** Messages accepted by an earlier run and never answered. */
  interrupted(): PendingMessage[];
}

export function telegramStateDir(dataDir: string, channel: string): string {
  return `${dataDir.replace(/\/+$/, '')}/channels/${encodeURIComponent(channel)}/telegram`;
}

export function fileTelegramState(dir: string): TelegramState {
  const pendingDir = `${dir}/pending`;
  mkdirSync(pendingDir, { recursive: true, mode: 0o700 });
  let offset = 0;
  try {
    const v = JSON.parse(readFileSync(`${dir}/state.json`, 'utf8')) as { offset?: unknown };
    // Up to 2^53: one past the highest update id (a safe integer, update.ts) is itself an offset.
    if (typeof v.offset === 'number' && Number.isInteger(v.offset) && v.offset >= 0 && v.offset <= 2 ** 53) offset = v.offset;
  } catch {
    // No state yet: start from whatever the server holds.
  }
  /**
   * Which files journal each unanswered update id (oldest first: after the ids start over, an old message
   * and a new one can share an id), and what each file still holds.
   */
  const filesOf = new Map<number, string[]>();
  const held = new Map<string, PendingMessage[]>();
  const hold = (file: string, list: PendingMessage[]) => {
    held.set(file, list);
    for (const p of list) filesOf.set(p.update_id, [...(filesOf.get(p.update_id) ?? []), file]);
  };
  /** A name no batch in flight (or left by a crash) uses. */
  const freeName = (first: number) => {
    for (let n = 0; ; n++) {
      const file = n === 0 ? `${first}.json` : `${first}-${n}.json`;
      if (!held.has(file) && !existsSync(`${pendingDir}/${file}`)) return file;
    }
  };
  return {
    offset: () => offset,
    accept(batch) {
      if (batch.length === 0) return;
      const file = freeName(batch[0].update_id);
      writeAtomic(pendingDir, file, JSON.stringify(batch), true);
      hold(file, [...batch]);
    },
    advance(next) {
      if (next <= offset) return;
      offset = next;
      writeAtomic(dir, 'state.json', JSON.stringify({ offset }), true);
    },
    restart(next) {
      offset = next;
      writeAtomic(dir, 'state.json', JSON.stringify({ offset }), true);
    },
    answered(id) {
      const files = filesOf.get(id);
      if (files === undefined) return;
      const file = files.shift()!;
      if (files.length === 0) filesOf.delete(id);
      const left = held.get(file)!.filter((p) => p.update_id !== id);
      if (left.length === 0) {
        held.delete(file);
        rmSync(`${pendingDir}/${file}`, { force: true });
      } else {
        held.set(file, left);
        writeAtomic(pendingDir, file, JSON.stringify(left), false);
      }
    },
    interrupted() {
      if (!existsSync(pendingDir)) return [];
      const out: PendingMessage[] = [];
      for (const f of readdirSync(pendingDir)) {
        if (!/^\d+(?:-\d+)?\.json$/.test(f) || held.has(f)) continue;
        try {
          // One message (a file an older runtime wrote) or the messages of one answer.
          const v = JSON.parse(readFileSync(`${pendingDir}/${f}`, 'utf8')) as PendingMessage | PendingMessage[];
          const list = (Array.isArray(v) ? v : [v]).filter((p) => Number.isSafeInteger(p?.update_id));
          hold(f, list);
          out.push(...list);
        } catch {
          rmSync(`${pendingDir}/${f}`, { force: true });
        }
      }
      return out.sort((a, b) => a.update_id - b.update_id);
    },
  };
}
