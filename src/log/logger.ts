// Logs: one JSON object per line on stderr (stdout carries protocol messages only).
// Every line passes the redactor, so a secret value that reaches a log field is masked.
import type { Logger } from '../kernel/ports.ts';
import type { Redactor } from './redactor.ts';
import { isoUtc } from './iso-time.ts';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export function createLogger(opts: { write: (line: string) => void; level?: LogLevel; redactor: Redactor; now?: () => number }): Logger {
  let min = RANK[opts.level ?? 'info'];
  const now = opts.now ?? Date.now;
  const emit = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (RANK[level] < min) return;
    // Redact values before serializing, so the line stays one valid JSON object whatever a secret
    // looks like (a numeric PIN included).
    const r = opts.redactor;
    let line: string;
    try {
      line = JSON.stringify({ ts: isoUtc(now()), level, msg: r.redact(msg), ...(r.redactValue(fields ?? {}) as object) });
    } catch {
      line = JSON.stringify({ ts: isoUtc(now()), level, msg: r.redact(msg), fields: '[unserializable]' });
    }
    opts.write(`${line}\n`);
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    setLevel(level: LogLevel) {
      min = RANK[level];
    },
  } as Logger & { setLevel(level: LogLevel): void };
}

/** A file descriptor written synchronously (fs.writeSync on Node); throws `{ code: 'EAGAIN' }` when a write would block. */
export interface SyncWriter {
  writeSync(data: Uint8Array): number;
}

/**
 * A log sink over a raw descriptor: each line goes out with synchronous writes, so nothing has to
 * create the runtime's stream objects at start-up (process.stderr costs over a millisecond). When a
 * write would block (fd 2 can be a non-blocking pipe, e.g. shared with stdout), that line's rest and
 * every later line go through `fallback()` (process.stderr, which queues): nothing is lost or reordered.
 * Other errors (EPIPE, EBADF: nobody reads the log any more) drop the line, never crash the runtime.
 */
export function createLogSink(fd: SyncWriter, fallback: () => { write(data: string | Uint8Array): unknown }): { write(s: string): void } {
  const enc = new TextEncoder();
  let stream: { write(data: string | Uint8Array): unknown } | undefined;
  return {
    write(s: string) {
      if (stream) {
        stream.write(s);
        return;
      }
      let bytes = enc.encode(s);
      while (bytes.length > 0) {
        let n: number;
        try {
          n = fd.writeSync(bytes);
        } catch (e) {
          if ((e as { code?: string }).code === 'EAGAIN') {
            stream = fallback();
            stream.write(bytes);
          }
          return;
        }
        bytes = bytes.subarray(n);
      }
    },
  };
}
