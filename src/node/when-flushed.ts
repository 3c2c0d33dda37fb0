// The process exits once its output has been handed to the OS (targets/node-env.ts runProcess). A stream that
// queued writes (process.stdout to a reader slower than claw; process.stderr after fd 2 would have blocked)
// must not be cut off by the exit: a client reading 3 MB of pipelined replies two seconds late got 964 of
// 50,001 (found in review; test/e2e/stdout-drain.test.ts). Like any writer to a pipe, claw then waits for its
// reader, as long as that takes; a reader that went away errors the stream, which ends the wait.

export interface QueuedWriter {
  readonly writableLength: number;
  readonly destroyed: boolean;
}

const POLL_MS = 20;

/** Calls `fn` once none of the streams (those opened so far) holds unwritten bytes. */
export function whenFlushed(streams: () => (QueuedWriter | undefined)[], fn: () => void): void {
  const pending = () => streams().some((s) => s !== undefined && !s.destroyed && s.writableLength > 0);
  if (!pending()) {
    fn();
    return;
  }
  // Polled, not 'drain': a stream emits 'drain' only after a write went over its high-water mark.
  const timer = setInterval(() => {
    if (pending()) return;
    clearInterval(timer);
    fn();
  }, POLL_MS);
}
