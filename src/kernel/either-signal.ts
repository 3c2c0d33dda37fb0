// One signal aborted when either of two is. AbortSignal.any exists from Node 18.17 and 20.3; the engine floor is
// Node 18.0, where without it a turn's stop (Ctrl-C in `claw chat`, an A2A cancel, a composite tool's stop) would
// not reach the running tool. dispose() unhooks the fallback's listeners once the work is done, so a long-lived
// session signal does not collect one listener per call.

export interface EitherSignal {
  signal: AbortSignal;
  dispose(): void;
}

type WithAny = typeof AbortSignal & { any?: (signals: AbortSignal[]) => AbortSignal };

/** `native`: AbortSignal.any where the runtime has it; null forces the fallback (tests). */
export function eitherSignal(a: AbortSignal, b: AbortSignal, native: WithAny['any'] | null = (AbortSignal as WithAny).any ?? null): EitherSignal {
  if (native) return { signal: native.call(AbortSignal, [a, b]), dispose() {} };
  const c = new AbortController();
  const onA = () => c.abort(a.reason);
  const onB = () => c.abort(b.reason);
  if (a.aborted) onA();
  else if (b.aborted) onB();
  a.addEventListener('abort', onA, { once: true });
  b.addEventListener('abort', onB, { once: true });
  return {
    signal: c.signal,
    dispose() {
      a.removeEventListener('abort', onA);
      b.removeEventListener('abort', onB);
    },
  };
}
