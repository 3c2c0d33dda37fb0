// Secret values the runtime has resolved are registered here; anything written to a log (and any
// error text built from external input) is passed through redact() first (runtime profile §7:
// "Secret values SHOULD NOT be logged, included in error messages, or transmitted").
export const REDACTED = '[REDACTED]';
/** Shorter values would mask ordinary text everywhere; they are never logged on purpose, but not masked. */
export const MIN_REDACTABLE_LENGTH = 4;

export class Redactor {
  private readonly values = new Set<string>();

  /**
   * Longest first, each secret with the other spellings it takes on the way out: JSON-escaped (inside a JSON
   * string) and percent-encoded (in a URL an error message or a proxy echoes), in upper- and lower-case hex.
   */
  private ordered: string[][] = [];

  add(secret: string): void {
    // Very short values would mask ordinary text everywhere; they are still never logged on purpose.
    if (secret.length < MIN_REDACTABLE_LENGTH || this.values.has(secret)) return;
    this.values.add(secret);
    // Longest first, so a secret that contains another leaves no tail behind.
    this.ordered = [...this.values].sort((a, b) => b.length - a.length).map(spellings);
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
    for (const forms of this.ordered) for (const f of forms) if (out.includes(f)) out = out.split(f).join(REDACTED);
    return out;
  }
}

/** `s` and each distinct other form of it (JSON-escaped, percent-encoded). */
function spellings(s: string): string[] {
  const forms = new Set([s, JSON.stringify(s).slice(1, -1)]);
  try {
    const url = encodeURIComponent(s);
    forms.add(url).add(url.replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase()));
  } catch {
    // A lone surrogate has no percent-encoding: nothing to add.
  }
  return [...forms];
}
