// Node prints process warnings (deprecations, TimeoutOverflowWarning, ExperimentalWarning, MaxListeners...) as
// plain text, `(node:PID) Name: message`, on stderr. It does so through a 'warning' listener of its own
// (`onWarning`), installed at start-up only when warnings are on: `--no-warnings` and `NODE_NO_WARNINGS=1` leave
// it out. stderr carries JSON log lines only (docs/protocol.md "Durations", runtime profile logging), so the
// runtime swaps that printer for one writing the same warning as a JSON log line. Warnings stay off when Node was
// told to keep them off (there is no printer to replace then), and `--redirect-warnings=<file>` keeps Node's
// printer, which writes to that file rather than to stderr. A warning emitted before this runs (a `--require`
// preload, a start-up flag) is printed by Node.
import { createLogger } from '../log/logger.ts';
import type { Redactor } from '../log/redactor.ts';

/** The name of the listener Node installs to print warnings (lib/internal/process/warning.js). */
const NODE_PRINTER = 'onWarning';

type WarningListener = (warning: Error & { code?: string; detail?: string }) => void;

/** The part of `process` this needs (injectable for tests). */
export interface WarningSource {
  listeners(event: 'warning'): Function[];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  removeListener(event: 'warning', listener: (...args: any[]) => void): unknown;
  on(event: 'warning', listener: WarningListener): unknown;
  readonly execArgv: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly pid: number;
}

/**
 * Replace Node's plain-text warning printer with a JSON log line (`level: "warn"`, `msg: "process warning"`)
 * handed to `write`. Returns false (and changes nothing) when there was no printer to replace or warnings go to
 * a file.
 */
export function logProcessWarnings(proc: WarningSource, write: (line: string) => void, redactor: Redactor): boolean {
  // Node's printer by its name: a listener a preload added (`--require`) is someone else's and stays.
  const printers = proc.listeners('warning').filter((l) => l.name === NODE_PRINTER);
  if (printers.length === 0) return false;
  const flags = [...proc.execArgv, ...(proc.env.NODE_OPTIONS ?? '').split(/\s+/)];
  if (flags.some((f) => f.startsWith('--redirect-warnings'))) return false;
  const traceAll = flags.includes('--trace-warnings');
  const traceDeprecation = flags.includes('--trace-deprecation');
  const log = createLogger({ write, redactor, level: 'warn' });
  for (const p of printers) proc.removeListener('warning', p as WarningListener);
  proc.on('warning', (w) => {
    const stack = traceAll || (traceDeprecation && w.name === 'DeprecationWarning') ? { stack: String(w.stack) } : {};
    log.warn('process warning', {
      name: w.name,
      ...(w.code !== undefined ? { code: w.code } : {}),
      warning: w.message,
      ...(w.detail !== undefined ? { detail: w.detail } : {}),
      pid: proc.pid,
      ...stack,
    });
  });
  return true;
}
