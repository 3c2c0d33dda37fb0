// Making an inherited pipe or socket descriptor non-blocking without creating process.stdin / process.stdout
// (docs/startup.md "Round 7"). A child inherits its stdio descriptors blocking (libuv's spawn and shells make them
// so), and Node has no public call that changes that short of creating the stream, which loads Node's stream and
// net modules (2–4 ms). process.stdin and process.stdout do it by opening libuv's pipe handle on the descriptor
// (`uv_pipe_open` sets O_NONBLOCK); this opens the same handle from Node's pipe_wrap binding and closes it again
// (libuv never closes descriptors 0–2; O_NONBLOCK stays, and Node puts the original flags back at exit, as it does
// after process.stdin). Where the binding cannot be had quietly — no `process.binding` (a future Node), no
// pipe_wrap behind it (Bun throws "not implemented"), the permission model (it throws), `--pending-deprecation`
// (Node wraps it to print DEP0111), a Node that would warn about pipe_wrap — the answer is false and the caller
// uses the stream.

/** libuv's pipe handle as Node's pipe_wrap binding exposes it (the one process.stdin wraps). */
interface PipeHandle {
  open(fd: number): number;
  close(): void;
}
export type PipeBinding = { Pipe: new (type: number) => PipeHandle; constants: { SOCKET: number } };

/** Whether `fd` (0–2, a pipe or a socket) is now non-blocking. */
export function makeNonBlocking(fd: number, binding: () => PipeBinding | undefined = pipeBinding): boolean {
  let b: PipeBinding | undefined;
  try {
    b = binding();
  } catch {
    return false; // permission model (ERR_ACCESS_DENIED), binding gone
  }
  if (!b || typeof b.Pipe !== 'function') return false;
  let handle: PipeHandle | undefined;
  try {
    handle = new b.Pipe(b.constants.SOCKET);
    return handle.open(fd) === 0;
  } catch {
    return false;
  } finally {
    try {
      handle?.close();
    } catch {}
  }
}

/**
 * Node's pipe_wrap binding, only through the undecorated `process.binding` (documentation-only deprecation DEP0111),
 * and only while that stays quiet: a Node that starts warning about this module (its runtime-deprecated list
 * emits through process.emitWarning during the call) gets no warning printed and the streams instead.
 */
function pipeBinding(): PipeBinding | undefined {
  const binding = (process as unknown as { binding?: (name: string) => unknown }).binding;
  if (typeof binding !== 'function' || binding.name !== 'binding') return undefined;
  const emitWarning = process.emitWarning;
  let warned = false;
  process.emitWarning = (() => {
    warned = true;
  }) as typeof process.emitWarning;
  try {
    const b = binding.call(process, 'pipe_wrap') as PipeBinding;
    return warned ? undefined : b;
  } finally {
    process.emitWarning = emitWarning;
  }
}
