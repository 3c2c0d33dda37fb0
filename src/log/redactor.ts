// Secret values the runtime has resolved are registered here; anything written to a log (and any
// error text built from external input) is passed through redact() first (runtime profile §7:
// "Secret values SHOULD NOT be logged, included in error messages, or transmitted").
export const REDACTED = '[REDACTED]';

export class Redactor {
  private readonly values = new Set<string>();

  add(secret: string): void {
    // Very short values would mask ordinary text everywhere; they are still never logged on purpose.
    if (secret.length >= 4) this.values.add(secret);
  }

  redact(text: string): string {
    let out = text;
    for (const s of this.values) {
      if (out.includes(s)) out = out.split(s).join(REDACTED);
      const json = JSON.stringify(s).slice(1, -1); // the value as it appears inside a JSON string
      if (json !== s && out.includes(json)) out = out.split(json).join(REDACTED);
    }
    return out;
  }
}
