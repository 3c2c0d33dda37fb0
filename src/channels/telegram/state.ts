// What a Telegram channel keeps across restarts, in data_dir/channels/{channel}/telegram/:
// `state.json` holds the next getUpdates offset; `pending/{update_id}.json` one accepted message whose
// answer has not gone out yet. A message is journaled in `pending/` *before* the offset moves past it,
// and its file is removed once the answer is sent: after a crash, the saved offset confirms everything
// handled before it (an update the server still serves below it, beside newer ones, is skipped: never
// replayed) and one found in `pending/` below it is answered "interrupted" (never lost without a word,
// never run twice); one at or above it was never confirmed, so the server serves it again and it runs
// then. The offset only moves back when the server's update ids start over (`restart`, channel.ts).
// Both writes are fsynced.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { writeAtomic } from '../../transports/fs/layout.ts';

export interface PendingMessage {
  update_id: number;
  chat_id: number;
  message_id: number;
}

export interface TelegramState {
  offset(): number;
  /** Journal an accepted message (before `advance`). */
  accept(p: PendingMessage): void;
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
    if (typeof v.offset === 'number' && Number.isSafeInteger(v.offset) && v.offset >= 0) offset = v.offset;
  } catch {
    // No state yet: start from whatever the server holds.
  }
  return {
    offset: () => offset,
    accept(p) {
      writeAtomic(pendingDir, `${p.update_id}.json`, JSON.stringify(p), true);
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
      rmSync(`${pendingDir}/${id}.json`, { force: true });
    },
    interrupted() {
      if (!existsSync(pendingDir)) return [];
      const out: PendingMessage[] = [];
      for (const f of readdirSync(pendingDir)) {
        if (!/^\d+\.json$/.test(f)) continue;
        try {
          out.push(JSON.parse(readFileSync(`${pendingDir}/${f}`, 'utf8')) as PendingMessage);
        } catch {
          rmSync(`${pendingDir}/${f}`, { force: true });
        }
      }
      return out.sort((a, b) => a.update_id - b.update_id);
    },
  };
}
