// Well-formed Unicode for everything that is kept. JSON text may carry "\ud800" escapes, which JSON.parse turns
// into JS strings holding a lone UTF-16 surrogate: no UTF-8 can represent one, and every encoder on the way to
// disk replaces it in its own way (TextEncoder and Buffer with U+FFFD, sql.js's binding with 3 bytes of WTF-8 that
// read back as three U+FFFD). Two different strings then become one on disk, or a string comes back other than it
// went in. So the wire refuses them (kernel/agent.ts, docs/protocol.md "Strings") and the storage layers make what
// they are handed well-formed before encoding it once (memory/sqlite/shared.ts).

/** Any surrogate code unit, paired or not: a cheap first test (no `u` flag, one pass, no allocation). */
const ANY_SURROGATE = /[\ud800-\udfff]/;
/** With the `u` flag a valid pair is one code point, so only a lone half has the general category Cs. */
const LONE_SURROGATE = /\p{Cs}/u;
const LONE_SURROGATES = /\p{Cs}/gu;

/** True when `s` holds no lone surrogate (String.prototype.isWellFormed, which Node 18 lacks). */
export function isWellFormed(s: string): boolean {
  return !ANY_SURROGATE.test(s) || !LONE_SURROGATE.test(s);
}

/** `s` with each lone surrogate replaced by U+FFFD (String.prototype.toWellFormed); `s` itself when well-formed. */
export function toWellFormed(s: string): string {
  return isWellFormed(s) ? s : s.replace(LONE_SURROGATES, '\ufffd');
}

/**
 * Where in a parsed JSON value the first string (object key or value) with a lone surrogate is, as a path like
 * `context.request_id` or `entries.2.content` (the path form of protocol/wire.ts issuesData); undefined when there is none. Iterative: the depth of a message
 * is bounded by the router, not by this walk.
 */
export function illFormedPath(value: unknown, root = ''): string | undefined {
  const stack: [unknown, string][] = [[value, root]];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      if (!isWellFormed(v)) return path;
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], path === '' ? String(i) : `${path}.${i}`]);
    } else if (typeof v === 'object' && v !== null) {
      for (const k of Object.keys(v)) {
        const p = path === '' ? k : `${path}.${k}`;
        if (!isWellFormed(k)) return p;
        stack.push([(v as Record<string, unknown>)[k], p]);
      }
    }
  }
  return undefined;
}
