// Secret values the runtime has resolved are registered here; anything written to a log (and any
// error text built from external input) is passed through redact() first (runtime profile §7:
// "Secret values SHOULD NOT be logged, included in error messages, or transmitted").
export const REDACTED = '[REDACTED]';
/** Shorter values would mask ordinary text everywhere; they are never logged on purpose, but not masked. */
export const MIN_REDACTABLE_LENGTH = 4;

export class Redactor {
  private readonly values = new Set<string>();

  /** Longest first, each with its JSON-escaped form (how it appears inside a JSON string), or undefined when equal. */
  private ordered: [string, string | undefined][] = [];

  add(secret: string): void {
    // Very short values would mask ordinary text everywhere; they are still never logged on purpose.
    if (secret.length < MIN_REDACTABLE_LENGTH || this.values.has(secret)) return;
    this.values.add(secret);
    // Longest first, so a secret that contains another leaves no tail behind.
    this.ordered = [...this.values]
      .sort((a, b) => b.length - a.length)
      .map((s) => {
        const json = JSON.stringify(s).slice(1, -1);
        return [s, json === s ? undefined : json];
      });
  }

  /** Secret values known so far (for output scanning). */
  known(): Iterable<string> {
    return this.values;
  }

  /** Redact inside a structured value: strings are masked, numbers that spell a secret become strings. */
  redactValue(value: unknown, depth = 0): unknown {
    if (typeof value === 'string') return this.redact(value);
    if ((typeof value === 'number' || typeof value === 'bigint') && this.redact(String(value)) !== String(value)) return REDACTED;
    if (depth > 32 || typeof value !== 'object' || value === null) return value;
    if (Array.isArray(value)) return value.map((v) => this.redactValue(v, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[this.redact(k)] = this.redactValue(v, depth + 1);
    return out;
  }

  redact(text: string): string {
    let out = text;
    for (const [s, json] of this.ordered) {
      if (out.includes(s)) out = out.split(s).join(REDACTED);
      if (json !== undefined && out.includes(json)) out = out.split(json).join(REDACTED);
    }
    return out;
  }
}
