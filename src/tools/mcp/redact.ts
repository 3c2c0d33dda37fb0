// Our credential header values (claw.runtime.yaml mcp.servers: bearer token, API keys) never reach a message,
// a log line or a tool result, whatever the server echoes back: a compromised or careless server that quotes
// the Authorization header in a JSON-RPC error or a result would otherwise hand it to the model, the chat and
// the audit log (ARCHITECTURE.md "never sees a secret").
export const REDACTED = '[REDACTED]';

/** The strings to hide: each header value, and each word of it long enough to be a token (not "Bearer"). */
export function secretsOf(headers: Record<string, string>): string[] {
  return [...new Set(Object.values(headers).flatMap((v) => [v, ...v.split(/\s+/).filter((w) => !/^(bearer|basic|token)$/i.test(w))]))]
    .filter((v) => v.length >= 6)
    .sort((a, b) => b.length - a.length);
}

export function redactText(s: string, secrets: readonly string[]): string {
  let out = s;
  for (const v of secrets) if (out.includes(v)) out = out.split(v).join(REDACTED);
  return out;
}

/** `value` (parsed JSON) with every string, keys included, redacted; walked without recursion. */
export function redactValue(value: unknown, secrets: readonly string[]): unknown {
  if (secrets.length === 0) return value;
  if (typeof value === 'string') return redactText(value, secrets);
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null) continue;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        if (typeof v[i] === 'string') v[i] = redactText(v[i] as string, secrets);
        else stack.push(v[i]);
      }
      continue;
    }
    const o = v as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      let x = o[k];
      if (typeof x === 'string') x = o[k] = redactText(x, secrets);
      else stack.push(x);
      const rk = redactText(k, secrets);
      if (rk !== k) {
        delete o[k];
        o[rk] = x;
      }
    }
  }
  return value;
}
