// Text as the model writes it, for a display that wants it (claw chat on a terminal). A channel asks to
// watch one turn by the turn's AbortSignal — the one object that travels unchanged from the channel
// through the per-conversation agent into the loop's provider requests — so no channel port changes.
// `from.mode` says whether the text is the answer itself (native) or JSON still to be validated.
export type DeltaListener = (text: string, from: { provider: string; attempt: number; mode?: string; request?: number }) => void;

const listeners = /* @__PURE__ */ new WeakMap<AbortSignal, DeltaListener>();

/** Watch the provider text of the turn run under `signal`; returns the function that stops watching. */
export function watchTurn(signal: AbortSignal, fn: DeltaListener): () => void {
  listeners.set(signal, fn);
  return () => listeners.delete(signal);
}

export function turnListener(signal: AbortSignal): DeltaListener | undefined {
  return listeners.get(signal);
}
