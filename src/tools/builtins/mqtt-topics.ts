// Topic allowlists of the MQTT builtins (docs/tools.md "mqtt-publish / mqtt-read"): MQTT 3.1.1 §4.7 filter
// matching, `+` one level, `#` the rest (and the parent level itself). Pure.

/** A topic name an agent may name: non-empty, no wildcard, no NUL, at most 65535 bytes. */
export function topicProblem(topic: unknown): string | undefined {
  if (typeof topic !== 'string' || topic === '') return 'topic must be a non-empty string';
  if (/[+#\u0000]/.test(topic)) return 'topic must be a topic name, without + or # wildcards';
  if (new TextEncoder().encode(topic).length > 65_535) return 'topic is longer than MQTT allows';
  return undefined;
}

export function topicMatches(filter: string, topic: string): boolean {
  const f = filter.split('/');
  const t = topic.split('/');
  // A filter starting with a wildcard does not match topics starting with `$` (MQTT §4.7.2).
  if ((f[0] === '+' || f[0] === '#') && topic.startsWith('$')) return false;
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '#') return true;
    if (i >= t.length) return false;
    if (f[i] !== '+' && f[i] !== t[i]) return false;
  }
  return f.length === t.length;
}

export function topicAllowed(filters: readonly string[] | undefined, topic: string): boolean {
  return (filters ?? []).some((f) => topicMatches(f, topic));
}
