// What a client has already written to stdin when the runtime starts, read at once and without process.stdin
// (docs/startup.md "Round 7"). A supervisor usually writes claw.initialize right after spawning claw: reading it
// synchronously once `claw run` has set up (src/cli/run.ts calls the stdio transport's readWaiting) answers it
// without waiting for a turn of the event loop, and before Node's stream and net modules are loaded: creating
// process.stdin on a pipe loads ~20 of them, 2–4 ms here (BENCH.md "Start-up: round 7"). The stream is opened
// afterwards and continues from the next byte.
//
// The read must not block: a client that has not written yet must not freeze the event loop (signals, timers,
// other transports). A regular file never blocks; a pipe or socket is made non-blocking first (nonblocking.ts),
// or, where that is not possible, by creating process.stdin (`fallback`), as before. Never a terminal, never Bun
// (its stdin may be a blocking descriptor), never Windows.
import { builtin } from './builtin.ts';
import { makeNonBlocking, type PipeBinding } from './nonblocking.ts';

/** Up to 64 KB already waiting on fd 0, or undefined (nothing there, not applicable, any error). */
export function stdinNow(fallback: () => unknown, binding?: () => PipeBinding | undefined): Uint8Array | undefined {
  if (process.platform === 'win32' || process.versions.bun) return undefined;
  const fs = builtin('node:fs');
  try {
    const st = fs.fstatSync(0);
    if (st.isFIFO() || st.isSocket()) {
      if (!makeNonBlocking(0, binding)) fallback(); // process.stdin: its handle makes the descriptor non-blocking
    } else if (!st.isFile()) return undefined;
    const buf = Buffer.allocUnsafe(64 * 1024);
    // position null: from the descriptor's offset, which a file's read stream continues from (no byte twice).
    const n = fs.readSync(0, buf, 0, buf.length, null);
    return n > 0 ? buf.subarray(0, n) : undefined;
  } catch {
    return undefined; // EAGAIN: nothing written yet; anything else: the stream reports it
  }
}
