// What a client has already written to stdin when the runtime starts, read at once (docs/startup.md "Round 6").
// A supervisor usually writes claw.initialize right after spawning claw: reading it synchronously once `claw run`
// has set up (src/cli/run.ts calls the stdio transport's readWaiting) answers it without waiting for a turn of the
// event loop, in which a start-up garbage collection can come first (~1 ms). Only where such a read cannot block: Node on POSIX with stdin a pipe,
// a socket or a file (libuv makes pipe and socket descriptors non-blocking when process.stdin opens them; a file
// read returns at once). Never a terminal, never Bun (its stdin may be a blocking descriptor), never Windows.
import { builtin } from './builtin.ts';

/** Up to 64 KB already waiting on fd 0, or undefined (nothing there, not applicable, any error). */
export function stdinNow(stdin: { isTTY?: boolean }): Uint8Array | undefined {
  if (process.platform === 'win32' || process.versions.bun || stdin.isTTY) return undefined;
  const fs = builtin('node:fs');
  try {
    const st = fs.fstatSync(0);
    if (!st.isFIFO() && !st.isSocket() && !st.isFile()) return undefined;
    const buf = Buffer.allocUnsafe(64 * 1024);
    // position null: from the descriptor's offset, which a file's read stream continues from (no byte twice).
    const n = fs.readSync(0, buf, 0, buf.length, null);
    return n > 0 ? buf.subarray(0, n) : undefined;
  } catch {
    return undefined; // EAGAIN: nothing written yet; anything else: the stream reports it
  }
}
