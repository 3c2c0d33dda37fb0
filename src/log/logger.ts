// Logs: one JSON object per line on stderr (stdout carries protocol messages only).
// Every line passes the redactor, so a secret value that reaches a log field is masked.
import type { Logger } from '../kernel/ports.ts';
import type { Redactor } from './redactor.ts';

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
      line = JSON.stringify({ ts: new Date(now()).toISOString(), level, msg: r.redact(msg), ...(r.redactValue(fields ?? {}) as object) });
    } catch {
      line = JSON.stringify({ ts: new Date(now()).toISOString(), level, msg: r.redact(msg), fields: '[unserializable]' });
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
