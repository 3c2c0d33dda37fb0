// What a server sends, as text, to a JSON value the core may handle. JSON.parse accepts any nesting, but
// everything after it recurses (JSON.stringify when a log line quotes a notification's data, the router
// writing a tool result): 100,000 levels in one stdio line threw RangeError out of a stream 'data' handler
// and ended the whole runtime. The depth is counted on the text, before parsing (protocol/depth.ts): linear,
// and a frame of `[` does not hold the event loop in JSON.parse either.
import { DEFAULT_MAX_DEPTH, textNestsDeeperThan } from '../../protocol/depth.ts';

/** Deepest nesting accepted in one server message (a JSON-RPC envelope takes 2-3 of these levels). */
export const MAX_MESSAGE_DEPTH = DEFAULT_MAX_DEPTH;

export type Inbound = { ok: true; value: unknown } | { ok: false; why: 'not-json' | 'too-deep' };

export function parseInbound(text: string): Inbound {
  if (textNestsDeeperThan(text, MAX_MESSAGE_DEPTH)) return { ok: false, why: 'too-deep' };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, why: 'not-json' };
  }
}
