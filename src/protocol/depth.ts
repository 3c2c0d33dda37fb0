// JSON.parse accepts arbitrarily deep nesting; everything after it (validation, logging) recurses.
// We bound the depth of every inbound message so no frame can exhaust the stack later on.
export const DEFAULT_MAX_DEPTH = 128;

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
