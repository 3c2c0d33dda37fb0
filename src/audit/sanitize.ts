// What goes into a record's `data`: every string passed through the redactor (runtime profile §7,
// keys included), made well-formed (a lone surrogate becomes U+FFFD, so the line stays strict JSON
// and verifiable), and bounded, so one huge tool output or argument cannot balloon the log.
export interface SanitizeLimits {
  maxString: number;
  maxItems: number;
  maxDepth: number;
}

export const DEFAULT_SANITIZE_LIMITS: SanitizeLimits = { maxString: 8192, maxItems: 1000, maxDepth: 24 };

export function sanitizeForAudit(value: unknown, redact: (s: string) => string, limits: SanitizeLimits = DEFAULT_SANITIZE_LIMITS, depth = 0): unknown {
  if (typeof value === 'string') return text(value, redact, limits.maxString);
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'bigint') return text(String(value), redact, limits.maxString);
  if (value === null || typeof value === 'boolean') return value;
  if (typeof value !== 'object') return null; // undefined inside arrays, functions: not JSON
  if (depth >= limits.maxDepth) return '[depth limit]';
  if (Array.isArray(value)) {
    const out = value.slice(0, limits.maxItems).map((x) => sanitizeForAudit(x, redact, limits, depth + 1));
    if (value.length > limits.maxItems) out.push(`[${value.length - limits.maxItems} more items]`);
    return out;
  }
  const out: Record<string, unknown> = {};
  let n = 0;
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined) continue;
    if (++n > limits.maxItems) {
      out['[more keys]'] = Object.keys(value).length - limits.maxItems;
      break;
    }
    const key = text(k, redact, 256);
    Object.defineProperty(out, key, { value: sanitizeForAudit(v, redact, limits, depth + 1), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function text(s: string, redact: (s: string) => string, max: number): string {
  let t = redact(s);
  if (t.length > max) t = `${t.slice(0, max)}…[${t.length - max} more chars]`;
  return wellFormed(t); // after the cut, which may split a surrogate pair
}

/** String.prototype.toWellFormed (Node 20+), for Node 18 too. */
export function wellFormed(s: string): string {
  if (!/[\ud800-\udfff]/.test(s)) return s;
  return s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
}
