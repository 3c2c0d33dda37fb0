// JSON.parse accepts arbitrarily deep nesting; everything after it (validation, logging) recurses.
// We bound the depth of every inbound message so no frame can exhaust the stack later on.
export const DEFAULT_MAX_DEPTH = 128;
/**
 * Nesting past which an inbound frame is refused without being parsed (textNestsDeeperThan): JSON.parse of 16k
 * levels takes ~25 ms; a frame of millions (a 4 MiB frame of `[`) would hold the event loop for seconds. Below
 * it the router parses the frame, so its refusal can echo the request's id.
 */
export const UNPARSED_DEPTH = 16_384;

/** Iterative depth measure: true when `value` nests deeper than `max`. */
export function exceedsDepth(value: unknown, max = DEFAULT_MAX_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (d > max) return true;
    const children = Array.isArray(v) ? v : Object.values(v);
    for (const c of children) if (typeof c === 'object' && c !== null) stack.push([c, d + 1]);
  }
  return false;
}

/**
 * How deep a JSON text nests objects and arrays, read without parsing it: brackets counted outside strings (escapes
 * skipped); the count stops at `cap` + 1. Linear, allocates nothing: it runs before JSON.parse, whose time grows
 * with the nesting (~1.4 µs a level: a 4 MB body of `[` holds the event loop for seconds). For a text JSON.parse
 * accepts this is the depth exceedsDepth measures on the parsed value (each object or array is one bracket pair),
 * without walking 200k objects again (~90 ms for a 2.5 MB body here). Malformed text is left to the parser.
 */
export function textDepth(text: string, cap: number): number {
  let depth = 0;
  let max = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max && (max = depth) > cap) return max;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return max;
}

/** Whether a JSON text nests deeper than `max` (textDepth). */
export function textNestsDeeperThan(text: string, max = DEFAULT_MAX_DEPTH): boolean {
  // Each level takes an opening and a closing bracket: a shorter text cannot nest deeper.
  return text.length > 2 * max && textDepth(text, max) > max;
}
