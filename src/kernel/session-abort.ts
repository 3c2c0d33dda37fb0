// A session's abort (src/kernel/agent.ts Session.abort), with its AbortController made only when something asks
// for the signal. Node loads internal/abort_controller at the first AbortController of a process: 0.28–0.43 ms
// measured on this machine, inside every `claw.initialize` reply, while a Level 1 session never reads the signal
// (tools, memory providers and `claw chat` do, later). Aborting before anyone asked is remembered: the signal made
// afterwards is already aborted, with the same reason.

export interface SessionAbort {
  readonly signal: AbortSignal;
  abort(reason?: unknown): void;
}

export function lazyAbort(): SessionAbort {
  let ctl: AbortController | undefined;
  let aborted: { reason: unknown } | undefined;
  return {
    get signal() {
      if (!ctl) {
        ctl = new AbortController();
        if (aborted) ctl.abort(aborted.reason);
      }
      return ctl.signal;
    },
    abort(reason?: unknown) {
      if (aborted) return; // as AbortController: the first reason stays
      aborted = { reason };
      ctl?.abort(reason);
    },
  };
}
