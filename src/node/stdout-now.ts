// Replies written straight to fd 1 while process.stdout does not exist yet (docs/startup.md "Round 7"): the stdio
// transport answers what stdin-now.ts read before it opens the streams, so the first replies need no stream and
// Node's stream and net modules load after them. Like process.stdout on POSIX, a write to a file or a terminal is
// synchronous, and a pipe or socket is written without blocking (nonblocking.ts): what does not fit now is handed
// back for the stream, which queues it, so a client that writes all its requests before reading any reply cannot
// deadlock with claw. Where the descriptor cannot be made non-blocking, nothing is written here.
import { builtin } from './builtin.ts';
import { makeNonBlocking, type PipeBinding } from './nonblocking.ts';

/**
 * A writer of `text` to fd 1 now. It returns undefined when all of it was written, or the bytes that were not
 * (EAGAIN, or the descriptor cannot be written directly). Other errors (EPIPE: the reader is gone) are thrown, as
 * the stream would report them.
 */
export function stdoutNow(binding?: () => PipeBinding | undefined): (text: string) => Uint8Array | undefined {
  let direct: boolean | undefined;
  return (text) => {
    const fs = builtin('node:fs');
    const bytes = Buffer.from(text, 'utf8');
    // Not on Windows (no O_NONBLOCK) nor Bun (stdin-now.ts does not read there, so nothing is answered early).
    direct ??= process.platform !== 'win32' && !process.versions.bun && writableNow(fs, binding);
    if (!direct) return bytes;
    let off = 0;
    while (off < bytes.length) {
      try {
        off += fs.writeSync(1, bytes, off, bytes.length - off);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EAGAIN') return bytes.subarray(off);
        throw e;
      }
    }
    return undefined;
  };
}

function writableNow(fs: typeof import('node:fs'), binding?: () => PipeBinding | undefined): boolean {
  try {
    const st = fs.fstatSync(1);
    return st.isFIFO() || st.isSocket() ? makeNonBlocking(1, binding) : st.isFile() || st.isCharacterDevice();
  } catch {
    return false; // no fd 1: the stream reports it
  }
}
