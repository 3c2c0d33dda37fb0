// `claw run --start`: a session whose start is refused only because the data directory is full waits for
// space instead of exiting. The audit log fails closed (docs/audit.md "Failure"): its first record must be
// written before the session serves anything. A daemon that exits then is restarted by its supervisor until
// the start limit leaves it down for good, on a board nobody watches (docs/boards.md). Space comes back by
// itself (logs rotated, a tmp file removed), so the start is tried again — 5 s, doubling to 5 min — until it
// works or the runtime is stopped. Every other start failure (a bad manifest, a corrupt log, a read-only or
// unwritable directory: an operator's fix) still ends the process, as before.
import { ErrorCode, ProtocolError } from '../protocol/errors.ts';
import type { Clock, Logger } from '../kernel/ports.ts';

export const START_RETRY_FIRST_MS = 5_000;
export const START_RETRY_MAX_MS = 300_000;
/** Errors that free space ends: the disk or the user's quota is full. */
const SPACE_ERRNOS = new Set(['ENOSPC', 'EDQUOT']);

/** The start failed because the audit log could not be written for want of space. */
export function waitsForSpace(e: unknown): boolean {
  if (!(e instanceof ProtocolError) || e.code !== ErrorCode.PolicyDenied) return false;
  const d = e.data as { rule_id?: unknown; errno?: unknown } | undefined;
  return d?.rule_id === 'audit:write_failed' && typeof d.errno === 'string' && SPACE_ERRNOS.has(d.errno);
}

export type StartOutcome = 'started' | { stopped?: string };

/**
 * Runs `start` until it succeeds; waits and tries again while it fails for want of space. `{ stopped }` when
 * the runtime was stopped (a signal, stdin closed) while waiting; `{}` when the start failed otherwise.
 */
export async function startWhenWritable(
  start: () => Promise<unknown>,
  stopped: Promise<string>,
  log: Logger,
  clock: Pick<Clock, 'setTimeout'>,
  /** False once a client's claw.initialize started a session during the wait: that one is kept. */
  stillNeeded: () => boolean = () => true,
): Promise<StartOutcome> {
  let stop: string | undefined;
  void stopped.then((r) => void (stop = r));
  let delay = START_RETRY_FIRST_MS;
  let attempts = 0;
  for (;;) {
    try {
      await start();
      if (attempts > 0) log.info('session started: the data directory takes writes again', { attempts: attempts + 1 });
      return 'started';
    } catch (e) {
      const error = e instanceof Error ? e.message : String(e);
      if (!waitsForSpace(e) || stop !== undefined) {
        log.error('session could not start', { error });
        return stop === undefined ? {} : { stopped: stop };
      }
      attempts++;
      // Once when the wait begins, then once per 5-minute wait: a full disk must not fill the journal.
      if (attempts === 1 || delay === START_RETRY_MAX_MS) log.warn('session start waits for space in the data directory', { error, attempts, retry_in_ms: delay });
    }
    const woken = await new Promise<boolean>((resolve) => {
      const t = clock.setTimeout(() => resolve(false), delay);
      void stopped.then(() => (t.cancel(), resolve(true)));
    });
    if (woken) {
      log.error('session could not start', { error: 'stopped while waiting for space in the data directory' });
      return { stopped: stop };
    }
    if (!stillNeeded()) {
      log.info('session started by a client while --start waited for space', { attempts });
      return 'started';
    }
    delay = Math.min(delay * 2, START_RETRY_MAX_MS);
  }
}
