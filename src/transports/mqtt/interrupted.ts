// The answer to a request the previous run acknowledged but never answered (journal.ts): it crashed mid-request,
// so its effects may or may not have happened. Like the fs transport (docs/transports.md, "Guarantees"), it is
// not run again: it is answered -32603 with data { request_id, reason: "interrupted" }, so it is never silently
// lost and never executed twice. A caller that knows the call is safe to repeat sends it under a new request_id.
import { ErrorCode } from '../../protocol/errors.ts';

const MESSAGE = 'Internal error: the runtime stopped while processing this request; it was not run again';

/** The reply text, or undefined when the request expected none (notifications). */
export function interruptedReply(text: string, requestId: string | undefined): string | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined; // unparsable requests were answered at once; never journaled as pending for long
  }
  const one = (m: unknown) =>
    typeof m === 'object' && m !== null && 'id' in m
      ? { jsonrpc: '2.0', id: (m as { id: unknown }).id ?? null, error: { code: ErrorCode.InternalError, message: MESSAGE, data: { request_id: requestId ?? null, reason: 'interrupted' } } }
      : undefined;
  if (Array.isArray(v)) {
    const out = v.map(one).filter((x) => x !== undefined);
    return out.length > 0 ? JSON.stringify(out) : undefined;
  }
  const r = one(v);
  return r ? JSON.stringify(r) : undefined;
}
